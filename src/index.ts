// The package's main export: the engine and its loader; bundles, their validation, compilation
// and resolution.
export { BucketEngine } from "./engine/bucket-engine.js";
export { Engine, type ArmChoice, type ArmPosteriors, type Ucb1Choice } from "./engine/engine.js";
export { ENGINE_URL, SCALAR_ENGINE_URL, compileEngine, createEngine, instantiateEngine, loadEngine, simdSupported, type EngineSource } from "./engine/loader.js";
export { RangeTable, SaltSet, type BucketRange } from "./engine/tables.js";
export { LinearArms, type LinearArmState } from "./engine/linear.js";
export type { Unit } from "./engine/checks.js";
export type { Distribution } from "./engine/abi.js";

export type * from "./bundle/types.js";
export { type BundleProblem, formatProblem, validateBundle } from "./bundle/validate.js";
export { BundleError, type CompiledBundle, compileBundle } from "./bundle/compile.js";
export { type LayerResolution, type Resolution, type ResolveOptions, contextProblems, resolve, unitValue } from "./bundle/resolve.js";
export { type ConditionPredicate, compileCondition, evalCondition } from "./bundle/conditions.js";
