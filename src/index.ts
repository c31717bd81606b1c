// The package's main export: the engine and its loader.
export { Engine, type ArmChoice, type ArmPosteriors, type Ucb1Choice } from "./engine/engine.js";
export { ENGINE_URL, SCALAR_ENGINE_URL, createEngine, loadEngine, simdSupported, type EngineSource } from "./engine/loader.js";
export { RangeTable, SaltSet, type BucketRange } from "./engine/tables.js";
export type { Unit } from "./engine/checks.js";
export type { Distribution } from "./engine/abi.js";
