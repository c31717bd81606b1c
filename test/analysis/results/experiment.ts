// Simulated experiments with known truth, as stored events: units exposed to allocations, track
// events after exposure with known values, and the noise the rules must see through (events
// before exposure, other orgs, projects and envs, attribution-only decisions, repeated exposures).
// Each unit's true value per metric is kept, so a test can compute every figure without the store.
import type { Policy } from "../../../src/bundle/types.js";
import type { StoredEvent } from "../../../src/store/types.js";
import { seeded } from "../simulate.js";

export const ORG = "org-1";
export const PROJECT = "shop";
export const ENV = "production";
export const START_MS = Date.parse("2026-11-01T00:00:00.000Z");
const MINUTE_MS = 60_000;

export const iso = (ms: number): string => new Date(ms).toISOString();

/** A static A/B/n policy whose allocations split 1000 buckets by these widths. */
export function staticPolicy(id: string, key: string, arms: readonly { key: string; name?: string; buckets: number }[]): Policy {
  let next = 0;
  return {
    id,
    key,
    state: "running",
    kind: "static",
    conditions: [],
    allocations: arms.map((arm) => {
      const range: [number, number] = [next, next + arm.buckets - 1];
      next += arm.buckets;
      return { id: `${id}-${arm.key}`, name: arm.name ?? arm.key, key: arm.key, bucketRange: range, overrides: {} };
    }),
  };
}

export interface ArmTruth {
  /** Units exposed to this allocation. */
  readonly units: number;
  /** Per metric event name: chance a unit converts, and the mean of its exponential value. */
  readonly events: Readonly<Record<string, { readonly rate: number; readonly meanValue?: number }>>;
  /** Logged propensity of the allocation (adaptive policies). */
  readonly probability?: number;
}

export interface SimulatedUnit {
  readonly unit: string;
  readonly allocationKey: string;
  readonly exposedMs: number;
  /** Per event name: the events that count (after exposure) and their summed value. */
  readonly counted: Record<string, { events: number; value: number }>;
  readonly probability?: number;
}

export interface Experiment {
  readonly events: StoredEvent[];
  readonly units: SimulatedUnit[];
}

let sequence = 0;

function stored(type: StoredEvent["type"], at: { ms: number; unit: string; name?: string; tenant?: Partial<Record<"orgId" | "projectId" | "env", string>> }, body: Record<string, unknown>): StoredEvent {
  sequence += 1;
  const tenant = { orgId: ORG, projectId: PROJECT, env: ENV, ...at.tenant };
  const timestamp = iso(at.ms);
  return { id: `ev-${sequence}`, receivedAt: timestamp, ...tenant, type, unitKey: at.unit, timestamp, ...(at.name !== undefined && { name: at.name }), body: { type, unitKey: at.unit, timestamp, ...body } };
}

/** An exposure (or decision) event naming the policy's allocation as the SDK logs it. */
export function exposure(policy: Policy, allocationKey: string, at: { ms: number; unit: string; type?: "exposure" | "decision"; probability?: number; withoutKeys?: boolean; attributionOnly?: boolean; tenant?: Partial<Record<"orgId" | "projectId" | "env", string>> }): StoredEvent {
  const allocation = policy.allocations.find((a) => a.key === allocationKey);
  const layer = {
    layerId: `layer-${policy.id}`,
    bucket: allocation?.bucketRange[0] ?? 0,
    policyId: policy.id,
    ...(at.withoutKeys !== true && { policyKey: policy.key, allocationKey }),
    allocationId: allocation?.id ?? allocationKey,
    allocationName: allocation?.name ?? allocationKey,
    ...(at.probability !== undefined && { probability: at.probability }),
    ...(at.attributionOnly === true && { attributionOnly: true }),
  };
  return stored(at.type ?? "exposure", at, { assignments: {}, layers: [layer] });
}

export function track(name: string, at: { ms: number; unit: string; value?: number; tenant?: Partial<Record<"orgId" | "projectId" | "env", string>> }): StoredEvent {
  return stored("track", { ...at, name }, { event: name, ...(at.value !== undefined && { value: at.value }) });
}

/**
 * Units exposed over `hours` hours, each allocation's units drawn with its truth; half of the
 * exposures are decision events, a third without policyKey/allocationKey (the ids must serve),
 * every fifth unit exposed again later. Converting units send 1–3 events after exposure (values
 * summed), some units send an event before exposure, and other tenants' copies add noise.
 */
export function simulateExperiment(policy: Policy, arms: Readonly<Record<string, ArmTruth>>, how: { seed: number; hours: number }): Experiment {
  const random = seeded(how.seed);
  const events: StoredEvent[] = [];
  const units: SimulatedUnit[] = [];
  for (const [allocationKey, truth] of Object.entries(arms)) {
    for (let i = 0; i < truth.units; i++) {
      const unit = `${policy.key}-${allocationKey}-u${i}`;
      const exposedMs = START_MS + Math.floor(random() * how.hours * 60) * MINUTE_MS;
      const counted: SimulatedUnit["counted"] = {};
      const type = i % 2 === 0 ? "exposure" : "decision";
      if (i % 7 === 3) events.push(track(Object.keys(truth.events)[0] ?? "none", { ms: exposedMs - MINUTE_MS, unit, value: 999 }));
      events.push(exposure(policy, allocationKey, { ms: exposedMs, unit, type, probability: truth.probability, withoutKeys: i % 3 === 1 }));
      if (i % 5 === 0) events.push(exposure(policy, allocationKey, { ms: exposedMs + 30 * MINUTE_MS, unit, probability: truth.probability }));
      for (const [name, event] of Object.entries(truth.events)) {
        counted[name] = { events: 0, value: 0 };
        if (random() >= event.rate) continue;
        const times = 1 + Math.floor(random() * 3);
        for (let k = 0; k < times; k++) {
          const value = event.meanValue === undefined ? undefined : Math.round(-event.meanValue * Math.log(1 - random()) * 100) / 100;
          events.push(track(name, { ms: exposedMs + (k + 1) * 10 * MINUTE_MS, unit, value }));
          counted[name].events += 1;
          counted[name].value += value ?? 0;
        }
        if (i % 11 === 0) events.push(track(name, { ms: exposedMs + MINUTE_MS, unit, value: 500, tenant: { env: "staging" } }));
      }
      if (i % 13 === 0) events.push(exposure(policy, allocationKey, { ms: exposedMs, unit: `${unit}-other-org`, tenant: { orgId: "org-2" } }));
      units.push({ unit, allocationKey, exposedMs, counted, ...(truth.probability !== undefined && { probability: truth.probability }) });
    }
  }
  events.sort((a, b) => (a.receivedAt < b.receivedAt ? -1 : a.receivedAt > b.receivedAt ? 1 : 0));
  return { events, units };
}
