// Both engine builds, for suites that must hold for each.
import { ENGINE_URL, SCALAR_ENGINE_URL, loadEngine } from "../../src/index.js";

export const builds = [
  { name: "simd", url: ENGINE_URL },
  { name: "scalar", url: SCALAR_ENGINE_URL },
] as const;

export const loadBuild = (url: URL) => loadEngine(url);
