// The learner's step scheduling (Learner.stepDue): this process's events wait in the feed for a
// batch or for the longest wait, so that at low traffic a step's fixed cost is shared by many.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Learner, STEP_BATCH } from "../../src/adaptive/learner.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { CommitListener } from "../../src/store/types.js";
import { LearnerLog, twoPolicyCatalogs } from "./learner-log.js";

const { catalogs } = await twoPolicyCatalogs();
const WAIT_MS = 1000;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the learner's step scheduling", () => {
  it("holds a few fed events until the oldest waited the longest wait, a batch not at all; an empty feed is due", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vane-steps-"));
    dirs.push(dir);
    const stores = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
    const log = new LearnerLog();
    let push: CommitListener = () => undefined;
    const learner = new Learner({ store: stores.learning, catalogs, now: () => log.now, feed: (l) => ((push = l), () => undefined) });
    let seq = 0;
    const feed = async (count: number) => {
      const events = Array.from({ length: count }, (_, i) => log.decision(`d${seq + i}`, i % 3));
      await stores.events.append(events);
      const first = seq + 1;
      push(events.map((event) => ({ seq: ++seq, event })), { first, last: seq });
    };
    try {
      expect(learner.stepDue(log.now, WAIT_MS)).toBe(true);
      await feed(3);
      expect(learner.stepDue(log.now, WAIT_MS)).toBe(false);
      log.now += WAIT_MS - 1;
      await feed(2); // later events do not make the oldest younger
      expect(learner.stepDue(log.now, WAIT_MS)).toBe(false);
      log.now += 1;
      expect(learner.stepDue(log.now, WAIT_MS)).toBe(true);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 5, decisions: 5, fed: 5 });
      expect(learner.stepDue(log.now, WAIT_MS)).toBe(true);

      await feed(STEP_BATCH - 1);
      expect(learner.stepDue(log.now, WAIT_MS)).toBe(false);
      await feed(1);
      expect(learner.stepDue(log.now, WAIT_MS)).toBe(true);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 5 + STEP_BATCH, fed: 5 + STEP_BATCH, scanned: 0 });
    } finally {
      learner.close();
      stores.close();
    }
  });
});
