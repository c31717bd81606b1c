// Past its bound on pending decisions in memory the learner's store always holds some, and it
// used to look up in the store every id of a page that memory did not answer: every decision
// resolve and decide just made too, whose id this process minted for it and no earlier event can
// name. Those are marked (MINTED_DECISION) and looked up nowhere; a client's events (a repeat of a
// spilled decision, its reward hours later) and everything a scan reads (a restart) still are.
// And every decision closes in the store there: one that counted as a trial when made is deleted
// without being read back (closeCounted).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decide } from "../../src/adaptive/decide.js";
import { Learner } from "../../src/adaptive/learner.js";
import { adaptiveCatalog } from "../../src/adaptive/policy.js";
import { PolicyState } from "../../src/adaptive/state.js";
import { compileBundle } from "../../src/bundle/compile.js";
import { resolve } from "../../src/bundle/resolve.js";
import { loadEngine } from "../../src/engine/loader.js";
import { decisionEvent } from "../../src/server/decision-event.js";
import { decideEvent } from "../../src/server/routes/decide.js";
import { learningRecord } from "../../src/store/learning-records.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import { type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import { type DecisionRecord, type LearningStore, MINTED_DECISION, type PendingDecision, type StoredEvent } from "../../src/store/types.js";
import { ctaBanditBundle } from "./fixtures.js";
import { LearnerLog, T0, twoPolicyCatalogs } from "./learner-log.js";

const { catalogs } = await twoPolicyCatalogs();
const log = new LearnerLog();
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

const open = (dir: string) => openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });

/** A decision as resolve or decide records it: its id minted for it. */
const minted = (id: string, arm: number): StoredEvent => ({ ...log.decision(id, arm), [MINTED_DECISION]: true });

/** The store, with the ids the learner asked it for. */
function asking(learning: LearningStore, asked: string[]): LearningStore {
  return Object.assign(Object.create(learning) as LearningStore, {
    pendingFor: (ids: readonly string[]) => (asked.push(...ids), learning.pendingFor(ids)),
  });
}

/** The population's [trials, rewards, …] of pol's arm. */
const arm = (learner: Learner, key: string) => Array.from(learner.state.policy("proj", "production", "pol").population.get(key) ?? []).slice(0, 2);

describe("decisions this process minted the id of", () => {
  it("are marked so by resolve and decide, in the feed's records only: no store writes the mark, so a scan's records have none", async () => {
    const engine = await loadEngine();
    const compiled = compileBundle(ctaBanditBundle(), engine);
    const tenant = { orgId: "org-1", projectId: "proj-1", env: "production" };
    const timestamp = new Date(T0).toISOString();
    const resolution = resolve(compiled, { userId: "u1" }, { now: T0 });
    const resolved = decisionEvent(resolution, { decisionId: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a50", ...tenant, configVersion: "v", nowMs: T0, timestamp, latencyMs: 0.1 }, "u1");
    const policy = adaptiveCatalog(compiled).get("pol-cta")!;
    const outcome = decide(compiled, policy, new PolicyState(), { context: { userId: "u2" }, entityId: undefined, now: T0 });
    if (!("decision" in outcome)) throw new Error(JSON.stringify(outcome));
    const decided = decideEvent(outcome.decision, "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a51", { ...tenant, version: "v", now: T0, timestamp, latencyMs: 0.1 });

    for (const event of [resolved, decided]) {
      expect(event[MINTED_DECISION]).toBe(true);
      expect((learningRecord({ seq: 1, event }) as DecisionRecord).minted).toBe(true);
    }
    const { [MINTED_DECISION]: _resolvedMark, ...unmarkedResolved } = resolved;
    const { [MINTED_DECISION]: _decidedMark, ...unmarkedDecided } = decided;
    expect(encodeLogRow([resolved, decided]).text).toBe(encodeLogRow([unmarkedResolved, unmarkedDecided]).text);
    const dir = mkdtempSync(join(tmpdir(), "vane-minted-"));
    dirs.push(dir);
    const stores = open(dir);
    try {
      await stores.events.append([resolved, decided]);
      const { events } = await stores.learning.scan(0, 10, 10);
      expect(events.map((e) => [e.decisionId, (e as DecisionRecord).minted])).toEqual([
        [resolved.decisionId, false],
        [decided.decisionId, false],
      ]);
    } finally {
      stores.close();
    }
  });

  it("past the bound are looked up nowhere, while a client's repeat of a spilled decision and its late reward find it, across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vane-minted-"));
    dirs.push(dir);
    const asked: string[] = [];
    let stores: SqliteStores = open(dir);
    const make = (s: SqliteStores) => new Learner({ store: asking(s.learning, asked), catalogs, now: () => T0, maxPendingInMemory: 2, feed: (l, reads) => s.events.onCommitted(l, reads) });
    let learner = make(stores);
    try {
      // Three rounds of resolve's decisions past a bound of 2: from the second on the store holds some.
      for (let round = 0; round < 3; round++) {
        await stores.events.append(Array.from({ length: 4 }, (_, i) => minted(`m${round}-${i}`, 0)));
        await learner.catchUp();
      }
      expect(learner.progress()).toMatchObject({ decisions: 12, inMemory: 2, stored: 10, scanned: 0 });
      expect(asked).toEqual([]);
      expect(arm(learner, "k0")).toEqual([12, 0]);

      // An SDK's exposure of a spilled decision and of a held one, and a reward for a spilled one: each found, none counted twice.
      await stores.events.append([log.decision("m0-1", 0, undefined, false, "exposure"), log.decision("m2-3", 0, undefined, false, "exposure"), log.reward("m0-2")]);
      await learner.catchUp();
      expect(asked).toEqual(expect.arrayContaining(["m0-1", "m0-2"]));
      expect(learner.progress()).toMatchObject({ decisions: 12, rewards: 1 });
      expect(arm(learner, "k0")).toEqual([12, 1]);

      // A restart: the memory is rebuilt from the log (no mark there), then more decisions, rewards and repeats.
      learner.close();
      stores.close();
      stores = open(dir);
      learner = make(stores);
      asked.length = 0;
      await stores.events.append([minted("m3-0", 0), log.reward("m0-3"), log.reward("m0-2"), log.decision("m1-0", 0, undefined, false, "exposure"), log.decision("m3-0", 0)]);
      await learner.catchUp();
      expect(asked).toEqual(expect.arrayContaining(["m0-3", "m0-2", "m1-0", "m3-0"]));
      // m3-0 is new (a trial), its client repeat is not; m0-3's reward counts, m0-2's second does not.
      expect(arm(learner, "k0")).toEqual([13, 2]);
      expect(learner.progress()).toMatchObject({ decisions: 1, rewards: 1 });
    } finally {
      learner.close();
      stores.close();
    }
  });

  it("close in the store without being read back once they counted as trials; a decision from before that (uncounted) is still read and learned", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vane-minted-"));
    dirs.push(dir);
    const stores = open(dir);
    const read: string[] = [];
    const store = Object.assign(Object.create(stores.learning) as LearningStore, {
      due: async (nowMs: number, limit: number) => {
        const rows = await stores.learning.due(nowMs, limit);
        read.push(...rows.map((r) => r.decisionId));
        return rows;
      },
    });
    let now = T0;
    try {
      // A pending row as a store from before trials were counted at once holds it.
      const old: PendingDecision = { decisionId: "old", policyId: "pol2", orgId: "org", projectId: "proj", env: "production", armKey: "k1", entity: "", features: undefined, rewardEvent: "win", decidedAt: T0, closesAt: T0 + 45_000, counted: false, rewarded: false };
      await stores.learning.commit({ arms: [], addPending: [old], rewardPending: [], removePending: [], checkpoint: 0, memoryFrom: 0 });
      const learner = new Learner({ store, catalogs, now: () => now, maxPendingInMemory: 2, feed: (l, reads) => stores.events.onCommitted(l, reads) });
      await stores.events.append(Array.from({ length: 6 }, (_, i) => minted(`m${i}`, 0)));
      await learner.catchUp();
      await stores.events.append([log.reward("m1")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ inMemory: 2, stored: 5, rewards: 1 });

      now = T0 + 200_000; // every window closed
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ inMemory: 0, stored: 0, closedWithoutReward: 6 });
      expect((await stores.learning.positions()).stored).toBe(0);
      expect(read).toEqual(["old"]);
      // The old decision's trial is counted as it closes; the others' were when they were made.
      expect(Array.from(learner.state.policy("proj", "production", "pol2").population.get("k1")!).slice(0, 2)).toEqual([1, 0]);
      expect(arm(learner, "k0")).toEqual([6, 1]);
    } finally {
      stores.close();
    }
  });
});
