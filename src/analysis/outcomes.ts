// What each decision of one policy earned: decision events joined with the track events that
// reward them, by the rules the learner uses too (docs/report.md "Rewards"). Fed stored events in
// store order, it keeps one small record per decision of the policy and nothing else, so a large
// store streams through it.
import type { Reward } from "../bundle/types.js";
import type { EventType, SequencedEvent, StoredEvent } from "../store/types.js";
import type { LoggedDecision } from "./off-policy.js";

export interface OutcomeScope {
  /** The org of the policy's bundle: another org's events never count, whatever project they name. */
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly policyId: string;
  /** Absent for a static policy: its decisions are still counted, none is rewarded. */
  readonly reward: Reward | undefined;
}

/** An arm as the decision events name it. */
export interface ArmLabel {
  readonly key: string;
  readonly name: string;
}

interface DecisionRecord {
  readonly arm: string;
  /** NaN when the event has no propensity in (0, 1]. */
  readonly propensity: number;
  readonly timeMs: number;
  /** Undefined until the decision's reward event comes. */
  reward: number | undefined;
}

export interface OutcomeCounts {
  /** Decisions of the policy, pending or not. */
  readonly decisions: number;
  /** Decisions without a propensity in (0, 1]: the estimators cannot use any of them. */
  readonly withoutPropensity: number;
  /** Per arm: decisions whose window is open and that have no reward yet. */
  readonly pendingByArm: ReadonlyMap<string, number>;
  readonly pending: number;
}

export interface DailyDecisions {
  /** YYYY-MM-DD, UTC. */
  readonly day: string;
  /** The arm's key. */
  readonly arm: string;
  readonly decisions: number;
}

export class PolicyOutcomes {
  private readonly decisions = new Map<string, DecisionRecord>();
  private readonly labels = new Map<string, ArmLabel>();
  private readonly windowMs: number;

  constructor(private readonly scope: OutcomeScope) {
    this.windowMs = (scope.reward?.windowSeconds ?? 0) * 1000;
  }

  observe(event: StoredEvent): void {
    if (event.projectId !== this.scope.projectId || event.env !== this.scope.env || event.orgId !== this.scope.orgId) return;
    if (event.type === "decision") this.addDecision(event);
    else if (event.type === "track" && event.name === this.scope.reward?.event) this.addReward(event);
  }

  /** Arms the decisions named, with the key and name of their first decision. */
  armLabels(): ReadonlyMap<string, ArmLabel> {
    return this.labels;
  }

  /** Decisions per arm (its key) per UTC day they were received, by day then arm. */
  dailyDecisions(): DailyDecisions[] {
    const counts = new Map<string, DailyDecisions>();
    for (const d of this.decisions.values()) {
      const day = new Date(d.timeMs).toISOString().slice(0, 10);
      const arm = this.labels.get(d.arm)?.key ?? d.arm;
      const id = `${day} ${arm}`;
      counts.set(id, { day, arm, decisions: (counts.get(id)?.decisions ?? 0) + 1 });
    }
    return [...counts.values()].sort((a, b) => a.day.localeCompare(b.day) || a.arm.localeCompare(b.arm));
  }

  counts(nowMs: number): OutcomeCounts {
    const pendingByArm = new Map<string, number>();
    let withoutPropensity = 0;
    let pending = 0;
    for (const d of this.decisions.values()) {
      if (!(d.propensity > 0)) withoutPropensity += 1;
      if (this.isPending(d, nowMs)) {
        pending += 1;
        pendingByArm.set(d.arm, (pendingByArm.get(d.arm) ?? 0) + 1);
      }
    }
    return { decisions: this.decisions.size, withoutPropensity, pendingByArm, pending };
  }

  /** The closed decisions, a missing reward counting as 0. Skips those without a propensity. */
  *closed(nowMs: number): Generator<LoggedDecision> {
    for (const d of this.decisions.values()) {
      if (this.isPending(d, nowMs) || !(d.propensity > 0)) continue;
      yield { arm: d.arm, propensity: d.propensity, reward: d.reward ?? 0, rewarded: d.reward !== undefined };
    }
  }

  private isPending(d: DecisionRecord, nowMs: number): boolean {
    return d.reward === undefined && d.timeMs + this.windowMs > nowMs;
  }

  private addDecision(event: StoredEvent): void {
    const id = event.decisionId;
    if (id === undefined || this.decisions.has(id)) return;
    const layer = policyLayer(event.body, this.scope.policyId);
    if (layer === undefined) return;
    const arm = layer.allocationId;
    if (typeof arm !== "string") return;
    if (!this.labels.has(arm)) this.labels.set(arm, { key: String(layer.allocationKey ?? arm), name: String(layer.allocationName ?? arm) });
    const p = layer.probability;
    const propensity = typeof p === "number" && p > 0 && p <= 1 ? p : Number.NaN;
    this.decisions.set(id, { arm, propensity, timeMs: Date.parse(event.receivedAt), reward: undefined });
  }

  // The first reward event received within the decision's window claims it: both times are the
  // server's (receivedAt), so client clocks don't matter, and the learner uses the same rule.
  // One stored before its decision cannot come through the API and is ignored.
  private addReward(event: StoredEvent): void {
    const decision = event.decisionId === undefined ? undefined : this.decisions.get(event.decisionId);
    if (decision === undefined || decision.reward !== undefined) return;
    if (Date.parse(event.receivedAt) > decision.timeMs + this.windowMs) return;
    if (this.scope.reward?.type === "binary") {
      decision.reward = 1;
      return;
    }
    const value = event.body.value;
    // A value reward without a value says nothing: a later event with one may still claim it.
    if (typeof value === "number" && Number.isFinite(value)) decision.reward = value;
  }
}

/**
 * The decision's layer that this policy decided, unless it was resolved only for attribution
 * (none of its parameters requested, so the unit was not treated).
 */
function policyLayer(body: Readonly<Record<string, unknown>>, policyId: string): Record<string, unknown> | undefined {
  const layers = body.layers;
  if (!Array.isArray(layers)) return undefined;
  for (const layer of layers as unknown[]) {
    if (typeof layer !== "object" || layer === null) continue;
    const l = layer as Record<string, unknown>;
    if (l.policyId === policyId) return l.attributionOnly === true ? undefined : l;
  }
  return undefined;
}

/** Reads one org, project and env's events of these types, in store order (DuckDB's view on Node, the store in a Worker). */
export interface EventScan {
  scan(scope: { orgId: string; projectId: string; env: string; types: readonly EventType[] }, visit: (event: SequencedEvent) => void): Promise<void>;
}

/** The outcomes of the policy's decisions, its project's decisions and track events read once (`vane report`, the console's policy page). */
export async function readPolicyOutcomes(reads: EventScan, subject: { policy: { id: string; reward?: Reward }; orgId: string; projectId: string; env: string }): Promise<PolicyOutcomes> {
  const { policy, orgId, projectId, env } = subject;
  const outcomes = new PolicyOutcomes({ orgId, projectId, env, policyId: policy.id, reward: policy.reward });
  await reads.scan({ orgId, projectId, env, types: ["decision", "track"] }, ({ event }) => outcomes.observe(event));
  return outcomes;
}
