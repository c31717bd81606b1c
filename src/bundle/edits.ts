// Everyday changes made on the stored bundle rather than by hand-editing JSON: a parameter's
// served default (`vane flags set`, the console) and a rollout's share (`vane rollout`, the
// console; 0 % pauses the policy). Each returns the edited copy and the note the CLI prints, or
// throws a BundleEditError naming what is wrong; the caller publishes it as a new version through
// the usual checks (server/admin/bundle-operations.ts). Pure: no I/O.
import type { Bundle, JsonValue, Parameter, Policy } from "./types.js";
import { DEFAULT_BUCKET_COUNT } from "./types.js";
import { didYouMean } from "./unknown-fields.js";

/** A change the bundle refuses (no such parameter, a value of the wrong type, a policy that is not a rollout). */
export class BundleEditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BundleEditError";
  }
}

/** One change, as the verbs take it: the value and the percentage as typed. */
export type BundleEdit = { readonly kind: "flag"; readonly key: string; readonly value: string } | { readonly kind: "rollout"; readonly policy: string; readonly percent: string };

export interface EditedBundle {
  readonly bundle: Bundle;
  /** What the CLI prints after publishing ("" when nothing). */
  readonly note: string;
}

/** `vane flags set KEY VALUE` or `vane rollout POLICY PERCENT` on a copy of `stored`. */
export function applyEdit(stored: Bundle, edit: BundleEdit): EditedBundle {
  if (edit.kind === "flag") {
    const { bundle, overriddenBy } = setDefault(stored, edit.key, edit.value);
    const note = overriddenBy.length === 0 ? "" : `Note: running ${overriddenBy.length === 1 ? "policy" : "policies"} ${overriddenBy.join(", ")} still override ${edit.key} for their units.`;
    return { bundle, note };
  }
  const rollout = setRollout(stored, edit.policy, parsePercent(edit.percent));
  const share = rollout.buckets === 0 ? "paused (0%)" : `${(rollout.buckets / rollout.bucketCount) * 100}% (buckets 0..${rollout.buckets - 1} of ${rollout.bucketCount})`;
  return { bundle: rollout.bundle, note: `Rollout ${rollout.policy.key}: ${share}.` };
}

/** A PERCENT as typed ("30", "30%"), from 0 to 100. */
export function parsePercent(text: string): number {
  const percent = Number(text.replace(/%$/, ""));
  if (text.trim() === "" || !Number.isFinite(percent) || percent < 0 || percent > 100) throw new BundleEditError(`PERCENT must be a number from 0 to 100, got "${text}"`);
  return percent;
}

/** A command-line VALUE read as the parameter's type: `true`/`false`, a number, JSON, or the text itself. */
export function parseValue(param: Parameter, text: string): JsonValue {
  const fail = (expected: string) => new BundleEditError(`${param.key} is a ${param.type} parameter: VALUE must be ${expected}, got ${JSON.stringify(text)}`);
  switch (param.type) {
    case "boolean":
      if (text === "true" || text === "on") return true;
      if (text === "false" || text === "off") return false;
      throw fail("true or false (on or off)");
    case "number":
    case "integer": {
      const n = Number(text);
      if (text.trim() === "" || !Number.isFinite(n) || (param.type === "integer" && !Number.isInteger(n))) throw fail(`a${param.type === "integer" ? "n integer" : " number"}`);
      return n;
    }
    case "json":
      try {
        return JSON.parse(text) as JsonValue;
      } catch {
        throw fail("JSON");
      }
    default:
      return text;
  }
}

export interface FlagEdit {
  readonly bundle: Bundle;
  /** Running policies that still override the parameter for their units. */
  readonly overriddenBy: readonly string[];
}

/** The bundle with parameter `key` served `text` by default. */
export function setDefault(stored: Bundle, key: string, text: string): FlagEdit {
  const bundle = structuredClone(stored);
  const param = bundle.parameters.find((p) => p.key === key);
  if (param === undefined) {
    const guess = didYouMean(key, bundle.parameters.map((p) => p.key));
    throw new BundleEditError(`${bundle.projectId}/${bundle.env} has no parameter ${key}${guess === undefined ? "" : ` (did you mean ${guess}?)`}`);
  }
  param.default = parseValue(param, text);
  const overriddenBy = bundle.layers
    .flatMap((l) => l.policies)
    .filter((p) => p.state === "running" && p.allocations.some((a) => Object.hasOwn(a.overrides, key)))
    .map((p) => p.key);
  return { bundle, overriddenBy };
}

export interface RolloutEdit {
  readonly bundle: Bundle;
  readonly policy: Policy;
  /** Buckets now in the rollout, of bucketCount. */
  readonly buckets: number;
  readonly bucketCount: number;
}

/**
 * The bundle with static policy `ref` (its id or key) serving its one allocation to `percent` of
 * units: buckets [0, n-1] where n = round(percent × bucketCount / 100). Units keep their bucket,
 * so raising the share only adds units. 0% pauses the policy (a range cannot be empty); more
 * than 0% sets it running.
 */
export function setRollout(stored: Bundle, ref: string, percent: number): RolloutEdit {
  const bundle = structuredClone(stored);
  const policies = bundle.layers.flatMap((l) => l.policies);
  const policy = policies.find((p) => p.id === ref) ?? policies.find((p) => p.key === ref);
  if (policy === undefined) {
    const guess = didYouMean(ref, policies.map((p) => p.key));
    throw new BundleEditError(`${bundle.projectId}/${bundle.env} has no policy ${ref}${guess === undefined ? "" : ` (did you mean ${guess}?)`}`);
  }
  if (policy.kind !== "static") throw new BundleEditError(`${ref} is a ${policy.kind} policy: its arms are weighted by what it learns, not rolled out`);
  if (policy.allocations.length !== 1) {
    throw new BundleEditError(`${ref} has ${policy.allocations.length} allocations; vane rollout moves a policy with one (a rollout), so edit an experiment's ranges in its file`);
  }
  const bucketCount = bundle.hashing.bucketCount ?? DEFAULT_BUCKET_COUNT;
  const buckets = Math.round((percent * bucketCount) / 100);
  if (buckets === 0) policy.state = "paused";
  else {
    policy.state = "running";
    policy.allocations[0]!.bucketRange = [0, buckets - 1];
  }
  return { bundle, policy, buckets, bucketCount };
}
