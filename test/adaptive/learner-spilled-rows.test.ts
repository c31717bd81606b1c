// Past its bound the learner spills every decision to SQLite, where a decision event's layers are
// one row (sqlite/pending-rows.ts): with windows of hours, rewards come long after the spill, a
// restart may come between, and a client may repeat a decision. Each layer's policy is credited
// once, within its own window, the row staying until its last layer's window closes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type CatalogSource, Learner } from "../../src/adaptive/learner.js";
import { adaptiveCatalog } from "../../src/adaptive/policy.js";
import { compileBundle } from "../../src/bundle/compile.js";
import type { Bundle } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import { DB_FILE_NAME, type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import { MINTED_DECISION, type StoredEvent } from "../../src/store/types.js";
import { SCHEMA_11_PENDING_TABLE } from "../store/fixtures.js";
import { policyBundle } from "./fixtures.js";
import { LearnerLog, T0 } from "./learner-log.js";

const HOUR = 3_600_000;

/** pol (window 3 h) and pol2 (window 1 h) in two layers, arms k0..k2, for org/proj. */
async function hourCatalogs(): Promise<CatalogSource> {
  const base = policyBundle({ reward: { event: "win", type: "binary", windowSeconds: 3 * 3600 } }, 3);
  const first = base.layers[0]!;
  const second = {
    id: "layer2",
    policies: [{ ...first.policies[0]!, id: "pol2", key: "pol2-key", reward: { event: "win", type: "binary" as const, windowSeconds: 3600 }, allocations: first.policies[0]!.allocations.map((a) => ({ ...a, id: `b${a.id}`, overrides: { variant2: a.key } })) }],
  };
  const bundle: Bundle = { ...base, parameters: [...base.parameters, { key: "variant2", type: "string", default: "none", layerId: "layer2", namespace: "n2" }], layers: [first, second] };
  const catalog = adaptiveCatalog(compileBundle(bundle, await loadEngine()));
  return async ({ orgId, projectId }) => (orgId === "org" && projectId === "proj" ? catalog : undefined);
}

const catalogs = await hourCatalogs();
const log = new LearnerLog();
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vane-spilled-rows-"));
  dirs.push(dir);
  return dir;
}

const open = (dir: string) => openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
/** A decision of both layers as resolve records it (pol on k{arm}, pol2 on the next arm). */
const resolved = (id: string, arm: number): StoredEvent => ({ ...log.decision(id, arm, undefined, true), [MINTED_DECISION]: true });
/** [trials, rewards] of a policy's arm, population. */
const arm = (learner: Learner, policyId: string, key: string) => Array.from(learner.state.policy("proj", "production", policyId).population.get(key) ?? []).slice(0, 2);
const rowCount = (dir: string): number => {
  const db = new Database(join(dir, DB_FILE_NAME), { readonly: true });
  try {
    return db.prepare<[], number>("SELECT count(*) FROM pending_decisions").pluck().get()!;
  } finally {
    db.close();
  }
};

describe("spilled decisions of two layers, a row each", () => {
  it("are credited once per layer by rewards hours later, within each layer's window, across a restart, a client's repeat counted once", async () => {
    const dir = tempDir();
    let now = T0;
    let stores: SqliteStores = open(dir);
    const make = (s: SqliteStores) => new Learner({ store: s.learning, catalogs, now: () => now, maxPendingInMemory: 2, feed: (l, reads) => s.events.onCommitted(l, reads) });
    let learner = make(stores);
    try {
      log.now = T0;
      await stores.events.append(Array.from({ length: 5 }, (_, i) => resolved(`d${i}`, 0))); // pol on k0, pol2 on k1
      await learner.catchUp();
      // Four decisions' layers past a bound of 2: eight pending decisions in four rows.
      expect(learner.progress()).toMatchObject({ decisions: 10, inMemory: 2, stored: 8 });
      expect(rowCount(dir)).toBe(4);

      learner.close();
      stores.close();
      stores = open(dir);
      learner = make(stores);

      // Half an hour on: d0 rewarded (both layers), twice; a client's repeat of d1 (both layers).
      now = log.now = T0 + HOUR / 2;
      await stores.events.append([log.reward("d0"), log.reward("d0"), log.decision("d1", 0, undefined, true, "exposure")]);
      await learner.catchUp();
      expect([arm(learner, "pol", "k0"), arm(learner, "pol2", "k1")]).toEqual([[5, 1], [5, 1]]);
      // Two hours on: pol2's window (1 h) has closed, pol's (3 h) has not: d2's reward credits pol alone.
      now = log.now = T0 + 2 * HOUR;
      await stores.events.append([log.reward("d2"), log.reward("d1"), log.decision("d3", 0, undefined, true, "exposure")]);
      await learner.catchUp();
      expect([arm(learner, "pol", "k0"), arm(learner, "pol2", "k1")]).toEqual([[5, 3], [5, 1]]);
      expect(learner.progress()).toMatchObject({ decisions: 0, rewards: 4 });
      expect(rowCount(dir)).toBe(4); // the rows close with their last layer

      learner.close();
      stores.close();
      stores = open(dir);
      learner = make(stores);
      // Past every window: the rows close, every layer's trial counted once, nothing rewarded again.
      now = log.now = T0 + 4 * HOUR;
      await stores.events.append([log.reward("d3"), log.reward("d2")]);
      await learner.catchUp();
      expect([arm(learner, "pol", "k0"), arm(learner, "pol2", "k1")]).toEqual([[5, 3], [5, 1]]);
      expect(learner.progress()).toMatchObject({ inMemory: 0, stored: 0, rewards: 0, closedWithoutReward: 6 });
      expect(rowCount(dir)).toBe(0);
    } finally {
      learner.close();
      stores.close();
    }
  });

  it("written a row per layer before the upgrade (schema 11) are still found by a late reward and closed", async () => {
    const dir = tempDir();
    open(dir).close();
    const raw = new Database(join(dir, DB_FILE_NAME));
    try {
      // Two decisions of both layers as the learner of schema 11 spilled them, d1's pol2 layer rewarded already.
      raw.exec(SCHEMA_11_PENDING_TABLE);
      const insert = raw.prepare("INSERT INTO pending_decisions VALUES (?, ?, 'proj', 'production', 'org', ?, '', NULL, 'win', ?, ?, 1, ?)");
      for (const id of ["d0", "d1"]) {
        insert.run(id, "pol", "k0", T0, T0 + 3 * HOUR, 0);
        insert.run(id, "pol2", "k1", T0, T0 + HOUR, id === "d1" ? 1 : 0);
      }
      raw.pragma("user_version = 11");
    } finally {
      raw.close();
    }
    let now = T0 + HOUR / 2;
    const stores = open(dir);
    const learner = new Learner({ store: stores.learning, catalogs, now: () => now, maxPendingInMemory: 2, feed: (l, reads) => stores.events.onCommitted(l, reads) });
    try {
      expect(rowCount(dir)).toBe(2);
      log.now = now;
      await stores.events.append([log.reward("d0"), log.reward("d1"), log.reward("d1")]);
      await learner.catchUp();
      // d0 credits both policies, d1 only pol (its pol2 layer had its reward).
      expect([arm(learner, "pol", "k0"), arm(learner, "pol2", "k1")]).toEqual([[0, 2], [0, 1]]);
      expect(learner.progress()).toMatchObject({ stored: 4, rewards: 3 });
      now = T0 + 4 * HOUR;
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ stored: 0, closedWithoutReward: 0 });
      expect(rowCount(dir)).toBe(0);
    } finally {
      learner.close();
      stores.close();
    }
  });
});
