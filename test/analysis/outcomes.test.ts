import { describe, expect, it } from "vitest";
import { type OutcomeScope, PolicyOutcomes } from "../../src/analysis/outcomes.js";
import type { StoredEvent } from "../../src/store/types.js";

const T0 = Date.parse("2026-05-01T12:00:00.000Z");
const HOUR_MS = 3_600_000;
const iso = (ms: number): string => new Date(ms).toISOString();

const BINARY: OutcomeScope = { orgId: "org-1", projectId: "shop", env: "production", policyId: "cta", reward: { event: "purchase", type: "binary", windowSeconds: 3600 } };
const VALUE: OutcomeScope = { ...BINARY, reward: { event: "purchase", type: "value", windowSeconds: 3600 } };

interface DecisionSpec {
  id: string;
  atMs: number;
  arm?: string;
  probability?: unknown;
  layer?: Record<string, unknown>;
  projectId?: string;
}

function decision(spec: DecisionSpec): StoredEvent {
  const arm = spec.arm ?? "blue";
  const layer = { layerId: "cta-layer", bucket: 1, policyId: "cta", policyKey: "cta", allocationId: `arm-${arm}`, allocationKey: arm, allocationName: arm, probability: spec.probability ?? 0.5, ...spec.layer };
  const base = { orgId: "org-1", projectId: spec.projectId ?? "shop", env: "production", unitKey: "u1", timestamp: iso(spec.atMs) };
  return { id: `evt-${spec.id}`, receivedAt: base.timestamp, ...base, type: "decision", decisionId: spec.id, body: { ...base, type: "decision", decisionId: spec.id, layers: [layer] } };
}

function track(decisionId: string, atMs: number, extra: { name?: string; value?: unknown } = {}): StoredEvent {
  const name = extra.name ?? "purchase";
  const base = { orgId: "org-1", projectId: "shop", env: "production", unitKey: "u1", timestamp: iso(atMs) };
  const body = { ...base, type: "track", event: name, decisionId, ...("value" in extra && { value: extra.value }) };
  return { id: `trk-${decisionId}-${atMs}`, receivedAt: base.timestamp, ...base, type: "track", name, decisionId, body };
}

function collect(scope: OutcomeScope, events: readonly StoredEvent[]): PolicyOutcomes {
  const outcomes = new PolicyOutcomes(scope);
  for (const event of events) outcomes.observe(event);
  return outcomes;
}

const LATER = T0 + 10 * HOUR_MS;

describe("PolicyOutcomes: decisions joined with their rewards", () => {
  it("binary: a reward event within the window is 1, none is 0 once the window closed", () => {
    const outcomes = collect(BINARY, [decision({ id: "d1", atMs: T0 }), decision({ id: "d2", atMs: T0, arm: "green", probability: 0.25 }), track("d1", T0 + 59 * 60_000)]);
    expect([...outcomes.closed(LATER)]).toEqual([
      { arm: "arm-blue", propensity: 0.5, reward: 1, rewarded: true },
      { arm: "arm-green", propensity: 0.25, reward: 0, rewarded: false },
    ]);
    expect(outcomes.counts(LATER)).toMatchObject({ decisions: 2, withoutPropensity: 0, pending: 0 });
  });

  it("a reward at the window's end counts; one after it does not", () => {
    const outcomes = collect(BINARY, [decision({ id: "edge", atMs: T0 }), decision({ id: "late", atMs: T0 }), track("edge", T0 + HOUR_MS), track("late", T0 + HOUR_MS + 1)]);
    expect([...outcomes.closed(LATER)].map((d) => d.reward)).toEqual([1, 0]);
  });

  it("a reward timestamped before its decision (client clock skew) counts", () => {
    const outcomes = collect(BINARY, [decision({ id: "d1", atMs: T0 }), track("d1", T0 - 5_000)]);
    expect([...outcomes.closed(LATER)][0]!.reward).toBe(1);
  });

  it("a reward stored before its decision, another event name, or another decision id is ignored", () => {
    const outcomes = collect(BINARY, [track("d1", T0 + 1_000), decision({ id: "d1", atMs: T0 }), track("d1", T0 + 2_000, { name: "signup" }), track("d9", T0 + 2_000)]);
    expect([...outcomes.closed(LATER)][0]!.reward).toBe(0);
  });

  it("value: the first reward event claims the decision; later duplicates are ignored", () => {
    const outcomes = collect(VALUE, [decision({ id: "d1", atMs: T0 }), track("d1", T0 + 1_000, { value: 12.5 }), track("d1", T0 + 2_000, { value: 99 })]);
    expect([...outcomes.closed(LATER)]).toEqual([{ arm: "arm-blue", propensity: 0.5, reward: 12.5, rewarded: true }]);
  });

  it("value: an event without a numeric value is skipped, so a later one with a value counts", () => {
    const outcomes = collect(VALUE, [decision({ id: "d1", atMs: T0 }), decision({ id: "d2", atMs: T0 }), track("d1", T0 + 1_000), track("d1", T0 + 2_000, { value: 7 }), track("d2", T0 + 1_000, { value: "7" })]);
    expect([...outcomes.closed(LATER)].map((d) => [d.reward, d.rewarded])).toEqual([
      [7, true],
      [0, false],
    ]);
  });

  it("pending: the window is open and no reward came yet; a rewarded decision is closed at once", () => {
    const now = T0 + 30 * 60_000;
    const outcomes = collect(BINARY, [decision({ id: "open", atMs: T0 }), decision({ id: "won", atMs: T0, arm: "green" }), decision({ id: "old", atMs: T0 - 2 * HOUR_MS }), track("won", T0 + 60_000)]);
    const counts = outcomes.counts(now);
    expect(counts.pending).toBe(1);
    expect([...counts.pendingByArm]).toEqual([["arm-blue", 1]]);
    expect([...outcomes.closed(now)].map((d) => [d.arm, d.reward])).toEqual([
      ["arm-green", 1],
      ["arm-blue", 0],
    ]);
    // Exactly when the window closes, the decision is no longer pending.
    expect(outcomes.counts(T0 + HOUR_MS).pending).toBe(0);
  });

  it("counts decisions without a propensity in (0, 1] and leaves them out of the closed ones", () => {
    const events = [
      decision({ id: "ok", atMs: T0 }),
      decision({ id: "none", atMs: T0, layer: { probability: undefined } }),
      decision({ id: "zero", atMs: T0, probability: 0 }),
      decision({ id: "big", atMs: T0, probability: 1.5 }),
      decision({ id: "text", atMs: T0, probability: "0.5" }),
    ];
    const outcomes = collect(BINARY, events);
    expect(outcomes.counts(LATER)).toMatchObject({ decisions: 5, withoutPropensity: 4 });
    expect([...outcomes.closed(LATER)]).toHaveLength(1);
  });

  it("only this policy, project and env; not attribution-only layers; the first of a repeated decision id", () => {
    const otherPolicy = decision({ id: "p", atMs: T0, layer: { policyId: "other" } });
    const otherEnv = { ...decision({ id: "e", atMs: T0 }), env: "staging" };
    const events = [
      decision({ id: "d1", atMs: T0 }),
      decision({ id: "d1", atMs: T0, arm: "green" }),
      otherPolicy,
      otherEnv,
      decision({ id: "x", atMs: T0, projectId: "blog" }),
      decision({ id: "attr", atMs: T0, layer: { attributionOnly: true } }),
    ];
    const outcomes = collect(BINARY, events);
    expect([...outcomes.closed(LATER)].map((d) => d.arm)).toEqual(["arm-blue"]);
  });

  it("names arms by the key and name of their first decision", () => {
    const outcomes = collect(BINARY, [decision({ id: "d1", atMs: T0, arm: "teal" })]);
    expect([...outcomes.armLabels()]).toEqual([["arm-teal", { key: "teal", name: "teal" }]]);
  });

  it("a policy without a reward (static): decisions counted, none pending or rewarded", () => {
    const outcomes = collect({ ...BINARY, reward: undefined }, [decision({ id: "d1", atMs: T0, layer: { probability: undefined } }), track("d1", T0 + 1_000)]);
    expect(outcomes.counts(T0)).toMatchObject({ decisions: 1, withoutPropensity: 1, pending: 0 });
  });
});
