// One adaptive decision (decisions.md §6–§7): the policy's arm for a unit (and entity) from the
// freshest learned state, its propensity, and what the response and the decision event carry.
import type { CompiledAllocation, CompiledBundle } from "../bundle/compile.js";
import { type Engine, ScoreRangeError } from "../engine/engine.js";
import { unitValue } from "../bundle/resolve.js";
import type { JsonValue } from "../bundle/types.js";
import { ENTITY_DRAWS, chooseArm } from "./choose.js";
import type { EntityArms } from "./entity-memory.js";
import { encodeFeatures, oversizedFeature } from "./features.js";
import type { AdaptivePolicy } from "./policy.js";
import { POPULATION, type PolicyState } from "./state.js";

export interface DecideInput {
  readonly context: Readonly<Record<string, unknown>>;
  /** The entity, when the caller names it rather than the context's entityKey field. */
  readonly entityId?: string;
  /** ms since the epoch: open decisions are judged at this time. */
  readonly now: number;
  /** Entities' statistics read for this decision (PolicyState.load) after it found them not held. */
  readonly loaded?: ReadonlyMap<string, EntityArms>;
}

export interface Decision {
  readonly policy: AdaptivePolicy;
  readonly arm: number;
  readonly probability: number;
  readonly algorithm: string;
  readonly unit: string;
  readonly bucket: number;
  readonly entityId: string | undefined;
  /** The encoded context of a contextual policy, logged for the learner. */
  readonly features: Float64Array | undefined;
  /** The arm's parameters: one frozen object per arm of a compiled bundle, shared by its decisions. */
  readonly assignments: Readonly<Record<string, JsonValue>>;
  readonly filteredContext: Record<string, unknown> | undefined;
  /** The learned state's revision the arm was chosen from. */
  readonly stateRevision: number;
}

/** `unloaded`: the entity's statistics are not in memory; decide again with them read (PolicyState.load). */
export type DecideOutcome = { readonly decision: Decision } | { readonly problem: string } | { readonly unloaded: string };

export function decide(compiled: CompiledBundle<Engine>, policy: AdaptivePolicy, state: PolicyState, input: DecideInput): DecideOutcome {
  const { context } = input;
  const unitKey = policy.layer.unitKey;
  const unit = unitValue(context, unitKey);
  if (unit === undefined) return { problem: `context lacks the unit key "${unitKey}"` };
  let entityId: string | undefined;
  if (policy.entityKey !== undefined) {
    entityId = input.entityId ?? unitValue(context, policy.entityKey);
    if (entityId === undefined) return { problem: `context lacks the entity key "${policy.entityKey}" (or give entityId)` };
  }
  const { engine } = compiled;
  const entity = entityId ?? POPULATION;
  const cache = state.cache(entity, policy, input.now, input.loaded);
  if (cache === undefined) return { unloaded: entity };
  const arms = cache.arms!;
  const features = policy.dimension > 0 ? encodeFeatures(policy.params.features, context) : undefined;
  const oversized = features && oversizedFeature(policy.params.features, features, policy.params.lambda);
  if (oversized !== undefined) return { problem: oversized };
  let choice: ReturnType<typeof chooseArm>;
  try {
    choice = chooseArm(engine, policy, arms, features, cache, entity === POPULATION ? policy.params.probabilityDraws : Math.min(policy.params.probabilityDraws, ENTITY_DRAWS));
  } catch (error) {
    // Accepted features times a learned θ near its bound (value rewards of ~1e153) can still score past 1e300.
    if (error instanceof ScoreRangeError) return { problem: "context is too large to score against this policy's learned state: an arm's score would pass 1e300; send smaller numeric features" };
    throw error;
  }
  if (features) state.rememberContext(features);
  return {
    decision: {
      policy,
      arm: choice.arm,
      probability: choice.probability,
      algorithm: choice.algorithm,
      unit,
      bucket: engine.bucket(policy.layerSalt, unit, compiled.bucketCount),
      entityId,
      features,
      assignments: armAssignments(compiled, policy, choice.arm),
      filteredContext: policy.logContextFields && pickFields(context, policy.logContextFields),
      stateRevision: state.version,
    },
  };
}

/** By the compiled allocation (an arm of a compiled bundle): its assignments never change. */
const armAssignmentsOf = new WeakMap<CompiledAllocation, Readonly<Record<string, JsonValue>>>();

/** The layer's parameters: defaults, then the arm's overrides; made once per arm of a compiled bundle. */
function armAssignments(compiled: CompiledBundle, policy: AdaptivePolicy, arm: number): Readonly<Record<string, JsonValue>> {
  const allocation = policy.compiled.allocations[arm]!;
  let assignments = armAssignmentsOf.get(allocation);
  if (assignments === undefined) {
    const made: Record<string, JsonValue> = {};
    for (const key of policy.layer.parameterKeys) made[key] = compiled.defaults[key]!;
    allocation.overrideKeys.forEach((key, i) => (made[key] = allocation.overrideValues[i]!));
    armAssignmentsOf.set(allocation, (assignments = Object.freeze(made)));
  }
  return assignments;
}

function pickFields(context: Readonly<Record<string, unknown>>, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of fields) if (Object.hasOwn(context, field)) picked[field] = context[field];
  return picked;
}
