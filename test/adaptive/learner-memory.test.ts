// The learner's pending decisions in memory (issue 15): a hard bound with the oldest spilled to the
// store, learning identical whatever the bound, exactly once across restarts with pending
// decisions in memory and in the store, and the feed of this process's commits with gaps.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Learner } from "../../src/adaptive/learner.js";
import { pruneEvents } from "../../src/store/retention.js";
import { type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import type { CommitListener, CommittedSpan, LearningStore, SequencedEvent, StoredEvent } from "../../src/store/types.js";
import { LearnerLog, T0, snapshot, twoPolicyCatalogs } from "./learner-log.js";

const { catalog, catalogs } = await twoPolicyCatalogs();

const events = new LearnerLog();
let dirs: string[] = [];
beforeEach(() => {
  events.now = T0;
});
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vane-learner-memory-"));
  dirs.push(dir);
  return dir;
}

const open = (dir: string) => openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });

function effective(learner: Learner): number[][] {
  return ["pol", "pol2"].flatMap((id) => learner.state.policy("proj", "production", id).populationArms(catalog.get(id)!, events.now).map((a) => Array.from(a)));
}

interface Run {
  readonly learner: Learner;
  readonly stores: SqliteStores;
}

/** Plays the rounds into a store and its learner, restarting the learner (a new process on the file) after the rounds listed. */
async function play(log: StoredEvent[][], maxPendingInMemory: number, restartsAfter: readonly number[] = [], fed = false): Promise<Run> {
  const dir = newDir();
  let stores = open(dir);
  const make = (s: SqliteStores) => new Learner({ store: s.learning, catalogs, now: () => events.now, maxPendingInMemory, ...(fed && { feed: (l: CommitListener) => s.events.onCommitted(l) }) });
  let learner = make(stores);
  for (let round = 0; round < log.length; round++) {
    events.now = T0 + round * 5000;
    await stores.events.append(log[round]!);
    await learner.catchUp();
    if (restartsAfter.includes(round)) {
      learner.close();
      stores.close();
      stores = open(dir);
      learner = make(stores);
    }
  }
  events.now = T0 + log.length * 5000 + 200_000; // every window closed
  await learner.catchUp();
  return { learner, stores };
}

describe("pending decisions in memory, bounded", () => {
  it("spills the oldest past the bound to the store, where their rewards still find them", async () => {
    const stores = open(newDir());
    try {
      const learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, maxPendingInMemory: 4 });
      await stores.events.append(Array.from({ length: 10 }, (_, i) => events.decision(`d${i}`, i % 3)));
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ decisions: 10, inMemory: 4, stored: 6 });
      expect((await stores.learning.positions()).stored).toBe(6);
      // The oldest went: d0..d5 are stored, d6..d9 held.
      expect((await stores.learning.pendingFor(["d0", "d5", "d6"])).map((p) => p.decisionId).sort()).toEqual(["d0", "d5"]);
      await stores.events.append([events.reward("d0"), events.reward("d9"), events.reward("d0")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ rewards: 2 });
      const population = learner.state.policy("proj", "production", "pol").population;
      expect(population.get("k0")![1]).toBe(2); // d0 and d9 are both arm k0
      expect((await stores.learning.pendingFor(["d0"]))[0]).toMatchObject({ rewarded: true });
      events.now += 121_000;
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ inMemory: 0, stored: 0, closedWithoutReward: 8 });
    } finally {
      stores.close();
    }
  });

  it("a decision event's layers are spilled together", async () => {
    const stores = open(newDir());
    try {
      const learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, maxPendingInMemory: 3 });
      await stores.events.append([events.decision("a", 0, undefined, true), events.decision("b", 1, undefined, true)]);
      await learner.catchUp();
      // Four pending decisions (two policies each) over a bound of 3: both of a's go.
      expect(learner.progress()).toMatchObject({ inMemory: 2, stored: 2 });
      expect((await stores.learning.pendingFor(["a", "b"])).map((p) => `${p.decisionId}/${p.policyId}`).sort()).toEqual(["a/pol", "a/pol2"]);
    } finally {
      stores.close();
    }
  });

  it("learns the same from the same log whatever the bound: none, tiny, huge", async () => {
    const log = events.rounds(7);
    const runs: Run[] = [];
    for (const bound of [0, 1, 5, 10_000_000]) runs.push(await play(log, bound)); // one at a time: they share the clock
    try {
      const [none, one, five, huge] = runs.map((r) => r.learner);
      expect(huge!.progress().stored).toBe(0);
      expect(none!.progress()).toMatchObject({ inMemory: 0 });
      const reference = await snapshot(huge!, runs[3]!.stores.learning);
      expect(Object.keys(reference).length).toBeGreaterThan(10);
      for (const [i, learner] of [none, one, five].entries()) {
        expect(await snapshot(learner!, runs[i]!.stores.learning)).toEqual(reference);
        expect(learner!.progress()).toMatchObject({ decisions: huge!.progress().decisions, rewards: huge!.progress().rewards, closedWithoutReward: huge!.progress().closedWithoutReward });
      }
      expect(huge!.progress().rewards).toBeGreaterThan(50);
    } finally {
      for (const r of runs) r.stores.close();
    }
  });

  it("exactly once across restarts, with pending decisions in memory and in the store", async () => {
    const log = events.rounds(11);
    const steady = await play(log, 10_000_000);
    const restarted = [await play(log, 10_000_000, [3, 9, 17, 18, 30]), await play(log, 8, [3, 9, 17, 18, 30]), await play(log, 0, [5, 25])];
    try {
      const reference = await snapshot(steady.learner, steady.stores.learning);
      for (const run of restarted) expect(await snapshot(run.learner, run.stores.learning)).toEqual(reference);
    } finally {
      steady.stores.close();
      for (const r of restarted) r.stores.close();
    }
  });

  it("after a restart mid-window the delay model's open decisions equal the steady learner's", async () => {
    const log = events.rounds(3).slice(0, 20); // windows still open at the end
    const runTo = async (bound: number, restartsAfter: number[]) => {
      const dir = newDir();
      let stores = open(dir);
      let learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, maxPendingInMemory: bound });
      for (let round = 0; round < log.length; round++) {
        events.now = T0 + round * 5000;
        await stores.events.append(log[round]!);
        await learner.catchUp();
        if (restartsAfter.includes(round)) {
          stores.close();
          stores = open(dir);
          learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, maxPendingInMemory: bound });
          await learner.catchUp();
        }
      }
      return { learner, stores };
    };
    const steady = await runTo(10_000_000, []);
    const spilled = await runTo(4, [12, 19]);
    try {
      expect(spilled.learner.progress().stored).toBeGreaterThan(0);
      expect(spilled.learner.progress().inMemory).toBe(4);
      expect(await snapshot(spilled.learner, spilled.stores.learning)).toEqual(await snapshot(steady.learner, steady.stores.learning));
      expect(effective(spilled.learner)).toEqual(effective(steady.learner));
    } finally {
      steady.stores.close();
      spilled.stores.close();
    }
  });

  it("a crash between a step's commit and its spill loses and doubles nothing", async () => {
    const log = events.rounds(5);
    const steady = await play(log, 10_000_000);
    const dir = newDir();
    let stores = open(dir);
    // The store fails every spill (a commit that adds pending rows) from round 12 on, as a process killed there would.
    let failSpills = false;
    const failing = (inner: LearningStore): LearningStore =>
      new Proxy(inner, {
        get: (target, property, receiver) => {
          const value = Reflect.get(target, property, receiver) as unknown;
          if (property !== "commit") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          return (step: Parameters<LearningStore["commit"]>[0]) => (failSpills && step.addPending.length > 0 ? Promise.reject(new Error("killed")) : target.commit(step));
        },
      });
    let learner = new Learner({ store: failing(stores.learning), catalogs, now: () => events.now, maxPendingInMemory: 6 });
    try {
      for (let round = 0; round < log.length; round++) {
        events.now = T0 + round * 5000;
        await stores.events.append(log[round]!);
        if (round === 12) {
          failSpills = true;
          await expect(learner.catchUp()).rejects.toThrow(/killed/);
          expect(learner.progress().inMemory).toBeGreaterThan(6); // the step committed, its spill did not
          stores.close();
          stores = open(dir);
          failSpills = false;
          learner = new Learner({ store: failing(stores.learning), catalogs, now: () => events.now, maxPendingInMemory: 6 });
        }
        await learner.catchUp();
      }
      events.now = T0 + log.length * 5000 + 200_000;
      await learner.catchUp();
      expect(await snapshot(learner, stores.learning)).toEqual(await snapshot(steady.learner, steady.stores.learning));
    } finally {
      stores.close();
      steady.stores.close();
    }
  });
});

describe("retention and the memory", () => {
  it("keeps the log a restart re-reads to rebuild the memory, and lets it go once the decisions closed", async () => {
    const dir = newDir();
    let stores = open(dir);
    const retention = { retainMs: 1000, dedupWindowMs: 1000 };
    try {
      let learner = new Learner({ store: stores.learning, catalogs, now: () => events.now });
      await stores.events.append([events.decision("a", 0), events.decision("b", 1)]);
      events.now += 100_000; // a and b are 100 s old, their window (120 s) open
      await stores.events.append([events.decision("c", 2)]);
      await learner.catchUp();
      await stores.events.setCheckpoint("parquet", 3);
      expect(await pruneEvents(stores.events, retention, events.now)).toMatchObject({ events: 0 });
      stores.close();
      stores = open(dir);
      learner = new Learner({ store: stores.learning, catalogs, now: () => events.now });
      await stores.events.append([events.reward("a")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ rewards: 1, inMemory: 3 });
      events.now += 200_000; // every window closed
      await stores.events.append([events.event("track", "nothing", {}, { name: "other" })]);
      await learner.catchUp(); // closes them in memory
      await stores.events.append([events.event("track", "nothing", {}, { name: "other" })]);
      await learner.catchUp(); // and commits a position past them
      await stores.events.setCheckpoint("parquet", 6);
      expect(await pruneEvents(stores.events, retention, events.now)).toMatchObject({ events: 4 });
    } finally {
      stores.close();
    }
  });
});

describe("the feed of this process's commits", () => {
  it("learns from memory what this process commits, and scans what others commit (gaps)", async () => {
    const dir = newDir();
    const stores = open(dir);
    const other = open(dir); // another process on the same file: its commits are not fed
    try {
      const learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, feed: (l) => stores.events.onCommitted(l) });
      await stores.events.append([events.decision("a", 0), events.decision("b", 1)]);
      await other.events.append([events.decision("c", 2), events.reward("a")]);
      await stores.events.append([events.reward("b"), events.reward("c"), events.reward("a")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 7, decisions: 3, rewards: 3, fed: 5, scanned: 2 });
      await stores.events.append([events.decision("d", 0), events.reward("d")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 9, decisions: 4, rewards: 4, fed: 7, scanned: 2 });
      const population = learner.state.policy("proj", "production", "pol").population;
      expect([0, 1, 2].map((arm) => Array.from(population.get(`k${arm}`)!.subarray(0, 2)))).toEqual([[2, 2], [1, 1], [1, 1]]);
    } finally {
      other.close();
      stores.close();
    }
  });

  it("a run that does not look past the feed reads no commit from the store it was not fed, and the next look does", async () => {
    const dir = newDir();
    const stores = open(dir);
    const other = open(dir); // another process on the same file: its commits are not fed
    try {
      const learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, feed: (l) => stores.events.onCommitted(l) });
      await stores.events.append([events.decision("a", 0)]);
      await other.events.append([events.decision("b", 1), events.reward("a")]);
      await learner.catchUp(false);
      expect(learner.progress()).toMatchObject({ position: 1, decisions: 1, fed: 1, scanned: 0 });
      await learner.catchUp(); // the look at the store
      expect(learner.progress()).toMatchObject({ position: 3, decisions: 2, rewards: 1, scanned: 2 });
      await stores.events.append([events.reward("b")]);
      await learner.catchUp(false); // fed, so learned without a look
      expect(learner.progress()).toMatchObject({ position: 4, rewards: 2, fed: 2, scanned: 2 });
    } finally {
      other.close();
      stores.close();
    }
  });

  it("waits for a gap the store has not filled yet, and learns what the feed ran ahead with once", async () => {
    const dir = newDir();
    const stores = open(dir);
    let push: CommitListener = () => undefined;
    const learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, feed: (l) => ((push = l), () => undefined) });
    const fed = (seq: number, event: StoredEvent): [SequencedEvent[], CommittedSpan] => [[{ seq, event }], { first: seq, last: seq }];
    try {
      const log = [events.decision("a", 0), events.decision("b", 1), events.reward("a"), events.reward("b"), events.decision("c", 2), events.reward("c")];
      await stores.events.append(log.slice(0, 2)); // seqs 1-2, not fed (a commit before the learner started, say)
      push(...fed(4, log[3]!)); // the feed runs ahead: seq 3 is not in the store yet
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 2, decisions: 2, rewards: 0 });
      await stores.events.append(log.slice(2, 4)); // seqs 3-4 reach the store
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 4, rewards: 2, fed: 1, scanned: 3 });
      push(...fed(5, log[4]!)); // ahead of the store, continuing from the position: learned from memory
      push(...fed(6, log[5]!));
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 6, decisions: 3, rewards: 3, fed: 3 });
      await stores.events.append(log.slice(4)); // the store catches up: nothing learned twice
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 6, decisions: 3, rewards: 3 });
      const population = learner.state.policy("proj", "production", "pol").population;
      expect(Array.from(population.get("k2")!.subarray(0, 2))).toEqual([1, 1]);
    } finally {
      stores.close();
    }
  });

  it("after a restart, waits for the store's events to reach the learned position before rebuilding the memory", async () => {
    const dir = newDir();
    let stores = open(dir);
    let push: CommitListener = () => undefined;
    try {
      let learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, feed: (l) => ((push = l), () => undefined) });
      const [a, b, c] = [events.decision("a", 0), events.decision("b", 1), events.decision("c", 2)];
      await stores.events.append([a!]); // seq 1
      await learner.catchUp();
      push([{ seq: 2, event: b! }, { seq: 3, event: c! }], { first: 2, last: 3 }); // learned from memory, not in the store's table yet
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 3, decisions: 3, inMemory: 3 });
      stores.close();
      stores = open(dir);
      learner = new Learner({ store: stores.learning, catalogs, now: () => events.now });
      await learner.catchUp(); // the table holds seq 1 only: the rebuild waits
      expect(learner.progress()).toMatchObject({ position: 3, inMemory: 1 });
      expect(learner.state.policy("proj", "production", "pol").population.get("k1")![0]).toBe(1); // the learned state is there meanwhile
      await stores.events.append([b!, c!, events.reward("b")]); // seqs 2-4
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 4, decisions: 0, rewards: 1, inMemory: 3 });
      expect(Array.from(learner.state.policy("proj", "production", "pol").population.get("k1")!.subarray(0, 2))).toEqual([1, 1]);
    } finally {
      stores.close();
    }
  });

  it("a fed learner learns what a scanning one does, across restarts", async () => {
    const log = events.rounds(13);
    const scanning = await play(log, 5);
    const fed = await play(log, 5, [8, 20], true);
    try {
      expect(fed.learner.progress().fed).toBeGreaterThan(0);
      expect(await snapshot(fed.learner, fed.stores.learning)).toEqual(await snapshot(scanning.learner, scanning.stores.learning));
    } finally {
      scanning.stores.close();
      fed.stores.close();
    }
  });
});
