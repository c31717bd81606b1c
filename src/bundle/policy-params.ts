// An adaptive policy's `params` (decisions.md §6), read once with their defaults. Validation and
// the learner read them through this one function, so a bundle that imports is one that decides.
import type { Policy, PolicyKind } from "./types.js";

export type FeatureSpec =
  | { readonly name: string; readonly type: "numeric" }
  | { readonly name: string; readonly type: "categorical"; readonly values: readonly string[] };

export interface PolicyParams {
  /** Thompson, binary rewards: the Beta prior of every arm. */
  readonly priorAlpha: number;
  readonly priorBeta: number;
  /** Thompson, value rewards: the Normal prior's mean, and the reward spread assumed before data. */
  readonly priorMean: number;
  readonly priorSd: number;
  /** UCB1 exploration constant. */
  readonly c: number;
  readonly epsilon: number;
  /** Contextual: declared features (an intercept comes first), the algorithm and its settings. */
  readonly features: readonly FeatureSpec[];
  readonly algorithm: "thompson" | "linucb";
  /** Ridge prior: A starts at lambda · I. */
  readonly lambda: number;
  /** Linear Thompson posterior scale. */
  readonly v: number;
  /** LinUCB exploration width. */
  readonly alpha: number;
  /** Published weights: an equal split until every arm has this many learned decisions. */
  readonly minSamples: number;
  /** Published weights: no arm below this share. */
  readonly weightFloor: number;
  /** Per-entity policies: at most this many of the population's observations per arm in an entity's prior. */
  readonly populationWeight: number;
  /** Thompson propensities: joint draws of the win-probability estimate. */
  readonly probabilityDraws: number;
}

export const DEFAULT_PARAMS: PolicyParams = {
  priorAlpha: 1,
  priorBeta: 1,
  priorMean: 0,
  priorSd: 1,
  c: Math.SQRT2,
  epsilon: 0.1,
  features: [],
  algorithm: "thompson",
  lambda: 1,
  v: 1,
  alpha: 1,
  minSamples: 30,
  weightFloor: 0.01,
  populationWeight: 10,
  probabilityDraws: 10_000,
};

/** Most features a contextual policy may declare, one-hot values included, intercept excluded. */
export const MAX_FEATURE_DIMENSION = 31;

type NumberRule = readonly [key: NumericParam, test: (x: number) => boolean, expected: string];
type NumericParam = Exclude<keyof PolicyParams, "features" | "algorithm">;

const positive = (x: number) => x > 0;
const nonNegative = (x: number) => x >= 0;
const NUMBER_RULES: readonly NumberRule[] = [
  ["priorAlpha", positive, "a number > 0"],
  ["priorBeta", positive, "a number > 0"],
  ["priorMean", () => true, "a finite number"],
  ["priorSd", positive, "a number > 0"],
  ["c", nonNegative, "a number >= 0"],
  ["epsilon", (x) => x >= 0 && x <= 1, "a number in [0, 1]"],
  ["lambda", positive, "a number > 0"],
  ["v", nonNegative, "a number >= 0"],
  ["alpha", nonNegative, "a number >= 0"],
  ["minSamples", (x) => Number.isInteger(x) && x >= 0, "an integer >= 0"],
  ["weightFloor", (x) => x >= 0 && x < 1, "a number in [0, 1)"],
  ["populationWeight", nonNegative, "a number >= 0"],
  ["probabilityDraws", (x) => Number.isInteger(x) && x >= 100 && x <= 1_000_000, "an integer in [100, 1000000]"],
];

export type ParamsResult = { readonly params: PolicyParams } | { readonly problems: readonly { path: string; message: string }[] };

/** Reads `policy.params` over the defaults; every problem names its params field. */
export function readPolicyParams(kind: PolicyKind | undefined, raw: unknown): ParamsResult {
  const problems: { path: string; message: string }[] = [];
  const given = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const params: Record<string, unknown> = { ...DEFAULT_PARAMS };
  for (const [key, test, expected] of NUMBER_RULES) {
    if (!Object.hasOwn(given, key)) continue;
    const value = given[key];
    if (typeof value === "number" && Number.isFinite(value) && test(value)) params[key] = value;
    else problems.push({ path: key, message: `must be ${expected}, got ${JSON.stringify(value) ?? String(value)}` });
  }
  if (Object.hasOwn(given, "algorithm")) {
    if (given.algorithm === "thompson" || given.algorithm === "linucb") params.algorithm = given.algorithm;
    else problems.push({ path: "algorithm", message: `must be "thompson" or "linucb", got ${JSON.stringify(given.algorithm)}` });
  }
  if (kind === "contextual") params.features = readFeatures(given.features, problems);
  return problems.length > 0 ? { problems } : { params: params as unknown as PolicyParams };
}

function readFeatures(raw: unknown, problems: { path: string; message: string }[]): FeatureSpec[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.push({ path: "features", message: "a contextual policy must declare a non-empty array of features" });
    return [];
  }
  const features: FeatureSpec[] = [];
  const names = new Set<string>();
  raw.forEach((f: unknown, i) => {
    const path = `features[${i}]`;
    const spec = f !== null && typeof f === "object" ? (f as Record<string, unknown>) : {};
    const name = spec.name;
    if (typeof name !== "string" || name === "") return problems.push({ path: `${path}.name`, message: "must be a non-empty string" });
    if (names.has(name)) return problems.push({ path: `${path}.name`, message: `repeats feature "${name}"` });
    names.add(name);
    if (spec.type === "numeric") return features.push({ name, type: "numeric" });
    if (spec.type !== "categorical") return problems.push({ path: `${path}.type`, message: 'must be "numeric" or "categorical"' });
    const values = spec.values;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === "string") || new Set(values).size !== values.length) {
      return problems.push({ path: `${path}.values`, message: "must be a non-empty array of distinct strings" });
    }
    return features.push({ name, type: "categorical", values });
  });
  if (featureDimension(features) > MAX_FEATURE_DIMENSION) {
    problems.push({ path: "features", message: `encode to ${featureDimension(features)} dimensions, at most ${MAX_FEATURE_DIMENSION}` });
  }
  return features;
}

/** Width of the encoded context, without the intercept: one per numeric, one per category value. */
export function featureDimension(features: readonly FeatureSpec[]): number {
  let d = 0;
  for (const f of features) d += f.type === "numeric" ? 1 : f.values.length;
  return d;
}

/** The params of a policy from a valid bundle. */
export function policyParams(policy: Pick<Policy, "kind" | "params">): PolicyParams {
  const result = readPolicyParams(policy.kind, policy.params);
  if ("problems" in result) throw new Error(`invalid params: ${result.problems.map((p) => `${p.path} ${p.message}`).join("; ")}`);
  return result.params;
}
