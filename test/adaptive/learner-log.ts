// The learner tests' log (learner-memory, learner-postgres, learner-turns, step-schedule): a bundle
// of two policies and its catalogs, the events of one org's decisions and rewards on a clock the
// test moves, a seeded log of rounds, and a snapshot of what a learner learned.
import { seeded } from "../../bench/seeded.js";
import type { CatalogSource, Learner } from "../../src/adaptive/learner.js";
import { type AdaptiveCatalog, adaptiveCatalog } from "../../src/adaptive/policy.js";
import { compileBundle } from "../../src/bundle/compile.js";
import type { Bundle } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import type { LearningStore, StoredEvent } from "../../src/store/types.js";
import { expect } from "vitest";
import { policyBundle } from "./fixtures.js";

export const T0 = Date.parse("2026-11-21T12:00:00.000Z");

/** Two policies with different windows in two layers; the first per entity. */
function twoPolicies(): Bundle {
  const base = policyBundle({ entityKey: "accountId", reward: { event: "win", type: "binary", windowSeconds: 120 } }, 3);
  const first = base.layers[0]!;
  const second = {
    id: "layer2",
    policies: [
      {
        ...first.policies[0]!,
        id: "pol2",
        key: "pol2-key",
        entityKey: undefined,
        reward: { event: "win", type: "binary" as const, windowSeconds: 45 },
        allocations: first.policies[0]!.allocations.map((a) => ({ ...a, id: `b${a.id}`, overrides: { variant2: a.key } })),
      },
    ],
  };
  return { ...base, parameters: [...base.parameters, { key: "variant2", type: "string", default: "none", layerId: "layer2", namespace: "n2" }], layers: [first, second] };
}

/** twoPolicies() compiled, and the catalogs that give it to org "org", project "proj" (any env) alone. */
export async function twoPolicyCatalogs(): Promise<{ readonly catalog: AdaptiveCatalog; readonly catalogs: CatalogSource }> {
  const catalog = adaptiveCatalog(compileBundle(twoPolicies(), await loadEngine()));
  return { catalog, catalogs: async ({ orgId, projectId }) => (orgId === "org" && projectId === "proj" ? catalog : undefined) };
}

/**
 * Every arm's statistics, population and entities, of both policies: the population's as the
 * learner holds them, the entities' as its store has them (the learner holds only the entities
 * decide used, each as stored: checked here).
 */
export async function snapshot(learner: Learner, store: LearningStore): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  const stored = await store.arms();
  for (const policyId of ["pol", "pol2"]) {
    const state = learner.state.policy("proj", "production", policyId);
    for (const [arm, stats] of state.population) out[`${policyId}/${JSON.stringify(arm)}`] = Array.from(stats);
    for (const row of stored) if (row.policyId === policyId && row.entity !== "") out[`${policyId}/${row.entity}/${row.armKey}`] = Array.from(row.stats);
    for (const [entity, { arms }] of state.entities) for (const [arm, stats] of arms) expect(Array.from(stats), `${policyId}/${entity}/${arm} held as stored`).toEqual(out[`${policyId}/${entity}/${arm}`]);
  }
  return out;
}

/**
 * Events of org/proj in production, stamped with `now` (the clock a test moves and hands its
 * learners) and numbered by one counter for all the log makes.
 */
export class LearnerLog {
  now = T0;
  private ids = 0;

  event(type: StoredEvent["type"], decisionId: string | undefined, body: Record<string, unknown>, extra: Partial<StoredEvent> = {}): StoredEvent {
    const iso = new Date(this.now).toISOString();
    return { id: `evt-${++this.ids}`, receivedAt: iso, orgId: "org", projectId: "proj", env: "production", type, unitKey: "u", timestamp: iso, ...(decisionId !== undefined && { decisionId }), body, ...extra };
  }

  /** A decision (or exposure) on arm `k{arm}` of pol, and of pol2 (the next arm) when `both`. */
  decision(decisionId: string, arm: number, account?: string, both = false, type: "decision" | "exposure" = "decision"): StoredEvent {
    const layers = [{ layerId: "layer", policyId: "pol", allocationKey: `k${arm}`, probability: 1 / 3 }];
    if (both) layers.push({ layerId: "layer2", policyId: "pol2", allocationKey: `k${(arm + 1) % 3}`, probability: 1 / 3 });
    return this.event(type, decisionId, { layers, ...(account !== undefined && { entityId: account }) });
  }

  reward(decisionId: string, extra: Partial<StoredEvent> = {}, body: Record<string, unknown> = {}): StoredEvent {
    return this.event("track", decisionId, body, { name: "win", ...extra });
  }

  /**
   * A log of 40 rounds, 5 s apart (moving `now` as it goes): decisions (some of both policies, some
   * per account), repeats of earlier decisions (exposures), their rewards 0–30 rounds late (some
   * after the window), repeated rewards, rewards from another env, and rewards naming nothing.
   */
  rounds(seed: number): StoredEvent[][] {
    const random = seeded(seed);
    const made: string[] = [];
    const out: StoredEvent[][] = [];
    const due = new Map<number, string[]>();
    for (let round = 0; round < 40; round++) {
      this.now = T0 + round * 5000;
      const page: StoredEvent[] = [];
      for (let i = 0; i < 6; i++) {
        const id = `d${round}-${i}`;
        made.push(id);
        page.push(this.decision(id, Math.floor(random() * 3), random() < 0.5 ? `acct-${Math.floor(random() * 4)}` : undefined, random() < 0.4));
        if (random() < 0.6) {
          const late = round + Math.floor(random() * 30);
          due.set(late, [...(due.get(late) ?? []), id]);
        }
      }
      if (made.length > 3 && random() < 0.7) page.push(this.decision(made[Math.floor(random() * made.length)]!, 0, undefined, false, "exposure"));
      for (const id of due.get(round) ?? []) {
        page.push(this.reward(id));
        if (random() < 0.2) page.push(this.reward(id));
        if (random() < 0.1) page.push(this.reward(id, { env: "staging" }));
      }
      if (random() < 0.3) page.push(this.reward(`nothing-${round}`));
      out.push(page);
    }
    return out;
  }
}
