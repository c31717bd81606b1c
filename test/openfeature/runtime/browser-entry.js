// The page's side: the official web SDK with VaneWebProvider, as window.ofProbe(optionsJson).
import { OpenFeature } from "@openfeature/web-sdk";
import { VaneWebProvider } from "../../../dist/client/vane-openfeature.js";
import { probe } from "./probe.js";

globalThis.ofProbe = async (json) => {
  const options = JSON.parse(json);
  return JSON.stringify(await probe({ OpenFeature, Provider: VaneWebProvider, perCall: false }, { ...options, wasm: new URL("/client/vane.wasm", location.href) }));
};
