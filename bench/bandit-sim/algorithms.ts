// The algorithms under test, each a policy of a real bundle: compileBundle validates it and
// adaptiveCatalog reads it exactly as the server does. The uniform baseline has no policy.
import { adaptiveCatalog, type AdaptiveKind, type AdaptivePolicy } from "../../src/adaptive/policy.js";
import { compileBundle } from "../../src/bundle/compile.js";
import type { Bundle } from "../../src/bundle/types.js";
import type { Engine } from "../../src/engine/engine.js";
import type { Problem } from "./problems.js";

export interface Algorithm {
  readonly key: string;
  readonly label: string;
  /** The policy kind, or "uniform" for the baseline that picks an arm uniformly at random. */
  readonly kind: AdaptiveKind | "uniform";
  readonly params: Readonly<Record<string, unknown>>;
}

export const THOMPSON: Algorithm = { key: "thompson", label: "Thompson sampling", kind: "thompson", params: {} };
export const UCB1: Algorithm = { key: "ucb1", label: "UCB1", kind: "ucb1", params: {} };
export const EPSILON_GREEDY: Algorithm = { key: "epsilon_greedy", label: "ε-greedy (ε = 0.1)", kind: "epsilon_greedy", params: {} };
export const UNIFORM: Algorithm = { key: "uniform", label: "uniform random", kind: "uniform", params: {} };
export const LINEAR_THOMPSON: Algorithm = { key: "linear_thompson", label: "contextual, linear Thompson", kind: "contextual", params: { algorithm: "thompson" } };
export const LINUCB: Algorithm = { key: "linucb", label: "contextual, LinUCB", kind: "contextual", params: { algorithm: "linucb" } };

/**
 * The defaults v = α = 1 suit rewards of sd ~1. A conversion's sd is √(p(1 − p)), about 0.25 at
 * the rates of the contextual problem: the same algorithms with their width on that scale.
 */
export const REWARD_SCALE = 0.25;
export const LINEAR_THOMPSON_SCALED: Algorithm = { key: "linear_thompson_scaled", label: `contextual, linear Thompson, v = ${REWARD_SCALE}`, kind: "contextual", params: { algorithm: "thompson", v: REWARD_SCALE } };
export const LINUCB_SCALED: Algorithm = { key: "linucb_scaled", label: `contextual, LinUCB, α = ${REWARD_SCALE}`, kind: "contextual", params: { algorithm: "linucb", alpha: REWARD_SCALE } };

/**
 * UCB1's bonus c·√(ln N / n) assumes rewards spread over [0, 1]; a conversion at a few percent
 * has sd ≈ 0.22, and c = √2 · 0.22 ≈ 0.3 puts the bonus on that scale.
 */
export const UCB1_SCALED: Algorithm = { key: "ucb1_scaled", label: "UCB1, c = 0.3", kind: "ucb1", params: { c: 0.3 } };

export const NON_CONTEXTUAL: readonly Algorithm[] = [THOMPSON, UCB1, EPSILON_GREEDY];
export const CONTEXTUAL_ALGORITHMS: readonly Algorithm[] = [LINEAR_THOMPSON, LINUCB, LINEAR_THOMPSON_SCALED, LINUCB_SCALED];

/** The algorithms run on a problem: contextual ones only where the context matters, UCB1 rescaled for conversions. */
export function algorithmsFor(problem: Problem): readonly Algorithm[] {
  const contextual = problem.features.length > 0 ? CONTEXTUAL_ALGORITHMS : [];
  const scaled = problem.rewardType === "binary" ? [UCB1_SCALED] : [];
  return [...contextual, ...NON_CONTEXTUAL, ...scaled, UNIFORM];
}

const POLICY_ID = "sim-policy";
const REWARD_EVENT = "reward";

/** A one-layer bundle whose only policy is the algorithm, with one arm per problem arm. */
export function simBundle(problem: Problem, algorithm: Algorithm & { readonly kind: AdaptiveKind }): Bundle {
  const { kind } = algorithm;
  const params = kind === "contextual" ? { features: problem.features, ...algorithm.params } : algorithm.params;
  return {
    version: "2026-11-21T12:00:00.000Z",
    orgId: "org-sim",
    projectId: "proj-sim",
    env: "production",
    hashing: { unitKey: "userId", bucketCount: 1000 },
    parameters: [{ key: "sim.arm", type: "integer", default: 0, layerId: "sim", namespace: "sim" }],
    layers: [
      {
        id: "sim",
        policies: [
          {
            id: POLICY_ID,
            key: `${POLICY_ID}-${algorithm.key}`,
            state: "running",
            kind,
            conditions: [],
            allocations: Array.from({ length: problem.armCount }, (_, arm) => ({
              id: `arm-${arm}`,
              name: `arm ${arm}`,
              key: `arm-${arm}`,
              bucketRange: [0, 999] as [number, number],
              overrides: { "sim.arm": arm },
            })),
            reward: { event: REWARD_EVENT, type: problem.rewardType, windowSeconds: 86_400 },
            params: { ...params },
          },
        ],
      },
    ],
  };
}

/** The running policy the server would build from the algorithm's bundle (undefined for the uniform baseline). */
export function simPolicy(engine: Engine, problem: Problem, algorithm: Algorithm): AdaptivePolicy | undefined {
  const { kind } = algorithm;
  if (kind === "uniform") return undefined;
  const policy = adaptiveCatalog(compileBundle(simBundle(problem, { ...algorithm, kind }), engine)).get(POLICY_ID);
  if (!policy) throw new Error(`${algorithm.key}: the bundle has no running adaptive policy ${POLICY_ID}`);
  return policy;
}
