// The learner gives the event loop turns (turns.ts, issue 33): a step over a page larger than its
// slice lets what waits run between the slices (scanned, fed, the rebuild after a restart, spills
// and closes in the store), and learns exactly what one uninterrupted step learns.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Learner, type LearnerOptions } from "../../src/adaptive/learner.js";
import { type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import type { CommitListener, StoredEvent } from "../../src/store/types.js";
import { LearnerLog, T0, snapshot, twoPolicyCatalogs } from "./learner-log.js";

const { catalogs } = await twoPolicyCatalogs();
const log = new LearnerLog();
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function open(dir = mkdtempSync(join(tmpdir(), "vane-learner-turns-"))): SqliteStores {
  if (!dirs.includes(dir)) dirs.push(dir);
  return openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
}

/** 1,500 decisions of both policies and a reward for every third, in one page. */
function page(): StoredEvent[] {
  const events: StoredEvent[] = [];
  for (let i = 0; i < 1500; i++) events.push(log.decision(`d${i}`, i % 3, `acct-${i % 7}`, i % 2 === 0));
  for (let i = 0; i < 1500; i += 3) events.push(log.reward(`d${i}`));
  return events;
}

/** Runs `work`, counting the event loop's turns (setImmediate callbacks) that ran before it ended. */
async function turnsDuring(work: () => Promise<void>): Promise<number> {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  done = true;
  return turns;
}

function learner(stores: SqliteStores, options: Partial<LearnerOptions> = {}): Learner {
  return new Learner({ store: stores.learning, catalogs, now: () => log.now, pageSize: 10_000, ...options });
}

describe("the learner's turns", () => {
  it("yields to the event loop between slices of a scanned page, and learns what one uninterrupted step learns", async () => {
    log.now = T0;
    const events = page();
    const [sliced, whole] = [open(), open()];
    await sliced.events.append(events);
    await whole.events.append(events);
    const slicedLearner = learner(sliced, { turnMs: 0 });
    const wholeLearner = learner(whole, { turnMs: 1e9 });
    // A timer due before the step starts fires before it ends.
    expect(await turnsDuring(() => slicedLearner.catchUp())).toBeGreaterThan(20);
    expect(await turnsDuring(() => wholeLearner.catchUp())).toBeLessThanOrEqual(1);
    expect(slicedLearner.progress()).toMatchObject({ decisions: 2250, rewards: 750, scanned: events.length });
    expect(await snapshot(slicedLearner, sliced.learning)).toEqual(await snapshot(wholeLearner, whole.learning));
    sliced.close();
    whole.close();
  });

  it("yields while taking a fed page, spilling, closing stored decisions and rebuilding after a restart, exactly once", async () => {
    log.now = T0;
    const dir = mkdtempSync(join(tmpdir(), "vane-learner-turns-"));
    let stores = open(dir);
    const fed = (s: SqliteStores) => (listener: CommitListener) => s.events.onCommitted(listener);
    let first = learner(stores, { turnMs: 0, maxPendingInMemory: 100, feed: fed(stores) });
    await stores.events.append(page());
    // Past the bound: 2,150 decisions spilled, a thousand at a time.
    expect(await turnsDuring(() => first.catchUp(false))).toBeGreaterThan(20);
    expect(first.progress()).toMatchObject({ decisions: 2250, rewards: 750, fed: 2000, scanned: 0, inMemory: 100, stored: 2150 });
    const learned = await snapshot(first, stores.learning);
    first.close();
    stores.close();

    // A restart re-reads the log behind the memory, in turns, learning nothing again.
    stores = open(dir);
    first = learner(stores, { turnMs: 0, maxPendingInMemory: 10_000 });
    expect(await turnsDuring(() => first.catchUp())).toBeGreaterThan(2);
    expect(await snapshot(first, stores.learning)).toEqual(learned);
    expect(first.progress()).toMatchObject({ decisions: 0, rewards: 0, stored: 2150 });

    // Every window closed: the stored decisions are closed a thousand rows at a time (their 2,150
    // layers are ~1,430 rows, a row per decision event).
    log.now = T0 + 3_600_000;
    expect(await turnsDuring(() => first.catchUp())).toBeGreaterThan(0);
    expect(first.progress()).toMatchObject({ stored: 0, inMemory: 0, closedWithoutReward: 1500 });
    expect(await snapshot(first, stores.learning)).toEqual(learned);
    stores.close();
  });
});
