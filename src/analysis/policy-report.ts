// The report of one policy: its arms (the bundle's, then any others its decisions name) with
// their counts and off-policy estimates, or why the logs cannot give one.
import type { Policy, Reward } from "../bundle/types.js";
import { type ArmEstimates, type Estimate, estimateArms } from "./off-policy.js";
import type { OutcomeCounts, PolicyOutcomes } from "./outcomes.js";

export interface ArmReport {
  readonly allocationId: string;
  readonly key: string;
  readonly name: string;
  /** False for an arm the decisions name but the current bundle no longer has. */
  readonly inBundle: boolean;
  /** Closed decisions: the window passed, or the reward came. */
  readonly decisions: number;
  readonly pending: number;
  /** Closed decisions that got a reward event. */
  readonly rewards: number;
  readonly rewardSum: number;
  readonly mean: number | null;
  readonly ips: Estimate | null;
  readonly snips: Estimate | null;
  readonly effectiveSampleSize: number;
}

export interface PolicyReport {
  readonly policy: { readonly id: string; readonly key: string; readonly kind: string };
  readonly projectId: string;
  readonly env: string;
  readonly reward: Reward;
  /** ISO 8601: decisions whose window is still open at this time are pending. */
  readonly asOf: string;
  /** Closed decisions over every arm: the N of the estimates. */
  readonly decisions: number;
  readonly pending: number;
  readonly arms: readonly ArmReport[];
}

export interface ReportSubject {
  readonly policy: Policy;
  /** The org of the bundle the policy is in. */
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
}

export function policyLabel(policy: Policy): string {
  return policy.key === policy.id ? `"${policy.id}"` : `"${policy.key}" (${policy.id})`;
}

/** Why no report can be made from these decisions, or undefined when one can. */
export function refusal(subject: ReportSubject, counts: OutcomeCounts): string | undefined {
  const { policy, projectId, env } = subject;
  if (counts.decisions === 0) return `policy ${policyLabel(policy)} has no decisions in ${projectId}/${env}`;
  if (counts.withoutPropensity === 0) return undefined;
  const why = policy.kind === "static" ? "a static policy logs none" : "they were logged without one";
  return `policy ${policyLabel(policy)} cannot be evaluated: ${counts.withoutPropensity} of ${counts.decisions} decisions have no propensity (probability); ${why}`;
}

/** The report; call it when `refusal` gave none (a static policy has no reward to report on). */
export function policyReport(subject: ReportSubject, outcomes: PolicyOutcomes, nowMs: number): PolicyReport {
  const { policy, projectId, env } = subject;
  if (policy.reward === undefined) throw new Error(`policy ${policyLabel(policy)} has no reward to evaluate`);
  const counts = outcomes.counts(nowMs);
  const bundleArms = new Map(policy.allocations.map((a) => [a.id, { key: a.key, name: a.name }]));
  const estimates = estimateArms(outcomes.closed(nowMs), [...bundleArms.keys(), ...counts.pendingByArm.keys()]);
  const labels = outcomes.armLabels();
  const arm = (e: ArmEstimates): ArmReport => {
    const label = bundleArms.get(e.arm) ?? labels.get(e.arm) ?? { key: e.arm, name: e.arm };
    const { decisions, rewarded, rewardSum, mean, ips, snips, effectiveSampleSize } = e;
    const pending = counts.pendingByArm.get(e.arm) ?? 0;
    return { allocationId: e.arm, ...label, inBundle: bundleArms.has(e.arm), decisions, pending, rewards: rewarded, rewardSum, mean, ips, snips, effectiveSampleSize };
  };
  return {
    policy: { id: policy.id, key: policy.key, kind: policy.kind },
    projectId,
    env,
    reward: policy.reward,
    asOf: new Date(nowMs).toISOString(),
    decisions: estimates.decisions,
    pending: counts.pending,
    arms: estimates.arms.map(arm),
  };
}
