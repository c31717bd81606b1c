// The worker's side: the official server SDK (nodejs_compat) with VaneServerProvider, the engine
// imported as a WebAssembly.Module.
import { OpenFeature } from "@openfeature/server-sdk";
import { VaneServerProvider } from "../../../dist/client/vane-openfeature.js";
import engine from "./vane.wasm";
import { probe } from "./probe.js";

export default {
  async fetch(request) {
    const options = await request.json();
    return Response.json(await probe({ OpenFeature, Provider: VaneServerProvider, perCall: true }, { ...options, wasm: engine }));
  },
};
