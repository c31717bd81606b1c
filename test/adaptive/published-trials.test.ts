// The open trials a learning server publishes for the others (published-trials.ts, issue 33): the
// first publication replaces what the store holds, later ones write only the bins that changed,
// and an unchanged state writes nothing; counted by a trigger on the real SQLite table.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { BINS } from "../../src/adaptive/delay.js";
import { PublishedTrials } from "../../src/adaptive/published-trials.js";
import { LearnedState } from "../../src/adaptive/state.js";
import { loadEngine } from "../../src/engine/loader.js";
import { SharedLearning } from "../../src/server/learning.js";
import { DB_FILE_NAME, type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import type { OpenTrialBin } from "../../src/store/types.js";

const engine = await loadEngine();
const T0 = Date.parse("2026-11-28T00:00:00.000Z");
const WINDOW = 3_600_000;
const WIDTH = WINDOW / BINS;
const ARMS = ["k0", "k1", "k2", "k3"];
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const bin = (armKey: string, i: number, count: number): OpenTrialBin => ({ projectId: "proj", env: "production", policyId: "pol", armKey, windowMs: WINDOW, atMs: T0 + i * WIDTH, count });

describe("the open trials' publication", () => {
  it("replaces at first, then gives the bins new, grown and gone; nothing when unchanged; the same again when not stored", () => {
    const state = new LearnedState();
    const policy = state.policy("proj", "production", "pol");
    policy.opened("k0", T0, WINDOW, 2);
    policy.opened("k0", T0 + WIDTH, WINDOW);
    policy.opened("k1", T0, WINDOW);
    const published = new PublishedTrials();
    const first = published.next(state, T0 + WIDTH)!;
    expect(first.changes).toEqual({ upsert: [bin("k0", 0, 2), bin("k0", 1, 1), bin("k1", 0, 1)], remove: [], replace: true });
    first.stored();
    expect(published.next(state, T0 + WIDTH)).toBeUndefined();

    policy.opened("k0", T0 + WIDTH + 1, WINDOW); // the newest bin grows
    policy.opened("k1", T0 + 2 * WIDTH, WINDOW); // a new bin
    const second = published.next(state, T0 + 2 * WIDTH)!;
    expect(second.changes).toEqual({ upsert: [bin("k0", 1, 2), bin("k1", 2, 1)], remove: [], replace: false });
    // Not stored (the store failed): the next publication carries the same changes.
    expect(published.next(state, T0 + 2 * WIDTH)!.changes).toEqual(second.changes);
    second.stored();

    // The first bins leave the window.
    const third = published.next(state, T0 + WINDOW + 1)!;
    expect(third.changes).toEqual({
      upsert: [],
      remove: [
        { projectId: "proj", env: "production", policyId: "pol", armKey: "k0", atMs: T0 },
        { projectId: "proj", env: "production", policyId: "pol", armKey: "k1", atMs: T0 },
      ],
      replace: false,
    });
  });

  it("a learning server's publication of 4 arms with 1,000 bins each writes only what changed, and no row when nothing did", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vane-published-trials-"));
    dirs.push(dir);
    const stores: SqliteStores = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
    const watch = new Database(join(dir, DB_FILE_NAME));
    try {
      watch.exec(`CREATE TABLE writes (n INTEGER NOT NULL); INSERT INTO writes VALUES (0);
        CREATE TRIGGER published_insert AFTER INSERT ON published_open_trials BEGIN UPDATE writes SET n = n + 1; END;
        CREATE TRIGGER published_update AFTER UPDATE ON published_open_trials BEGIN UPDATE writes SET n = n + 1; END;
        CREATE TRIGGER published_delete AFTER DELETE ON published_open_trials BEGIN UPDATE writes SET n = n + 1; END;`);
      const writes = () => watch.prepare<[], number>("SELECT n FROM writes").pluck().get()!;
      let now = T0 + 1000 * WIDTH;
      const shared = new SharedLearning({ stores, engine, clock: { now: () => now }, lease: { name: "learner", holder: "a" } });
      shared.lead();
      const policy = shared.state.policy("proj", "production", "pol");
      for (const arm of ARMS) for (let i = 0; i < 1000; i++) policy.opened(arm, T0 + i * WIDTH, WINDOW);

      expect(await shared.share()).toBe(true);
      expect(writes()).toBe(4000);
      expect(await shared.share()).toBe(false);
      expect(writes()).toBe(4000);

      policy.opened("k2", T0 + 999 * WIDTH, WINDOW); // a bin grew
      policy.opened("k3", T0 + 1000 * WIDTH, WINDOW); // a new bin
      expect(await shared.share()).toBe(true);
      expect(writes()).toBe(4002);

      now = T0 + WINDOW + 1; // every arm's first bin left the window
      expect(await shared.share()).toBe(true);
      expect(writes()).toBe(4006);
      const stored = await stores.learning.publishedOpenTrials();
      expect(stored).toHaveLength(3997);
      expect(stored.find((b) => b.armKey === "k2" && b.atMs === T0 + 999 * WIDTH)!.count).toBe(2);
    } finally {
      watch.close();
      stores.close();
    }
  });
});
