// The learner's count of updates skipped because they would overflow an arm's statistics
// (stats.ts): exact, whatever the walk does. A step whose entities were not held is walked again
// once they are read (EntityBases), and its skips must count once, as an unbounded learner's do.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { Learner } from "../../src/adaptive/learner.js";
import { adaptiveCatalog } from "../../src/adaptive/policy.js";
import { compileBundle } from "../../src/bundle/compile.js";
import { loadEngine } from "../../src/engine/loader.js";
import { type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import { policyBundle } from "./fixtures.js";
import { LearnerLog, T0 } from "./learner-log.js";

const catalog = adaptiveCatalog(compileBundle(policyBundle({ entityKey: "accountId", reward: { event: "win", type: "value", windowSeconds: 3600 } }, 3), await loadEngine()));
const catalogs = async ({ orgId, projectId }: { orgId: string; projectId: string }) => (orgId === "org" && projectId === "proj" ? catalog : undefined);
const ACCOUNTS = Array.from({ length: 6 }, (_, i) => `acct-${i}`);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function storesIn(): SqliteStores {
  const dir = mkdtempSync(join(tmpdir(), "vane-learner-skipped-"));
  dirs.push(dir);
  return openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
}

it("counts each skipped update once, also when a step is walked again for the entities it had to read", async () => {
  const log = new LearnerLog();
  log.now = T0;
  const learners = [2, 1_000_000].map((maxEntitiesInMemory) => {
    const stores = storesIn();
    return { stores, learner: new Learner({ store: stores.learning, catalogs, now: () => log.now, maxEntitiesInMemory }) };
  });
  const append = async (page: ReturnType<LearnerLog["decision"]>[]) => {
    for (const { stores, learner } of learners) {
      await stores.events.append(page);
      await learner.catchUp();
    }
  };
  await append(ACCOUNTS.map((account, i) => log.decision(`d${i}`, i % 3, account)));
  log.now += 1_000;
  // Three rewards whose square overflows Σr² (each skipped for the population's arm and the
  // entity's: 2 updates), one that is learned. The bounded learner holds 2 of the 6 entities, so
  // its step meets entities it must read and walks the page again.
  await append([
    log.reward("d0", {}, { value: 1.7e308 }),
    log.reward("d1", {}, { value: 2 }),
    log.reward("d2", {}, { value: 1.7e308 }),
    log.reward("d3", {}, { value: 1.7e308 }),
  ]);
  const [bounded, unbounded] = learners.map(({ learner }) => learner.progress());
  expect(unbounded!.rewards).toBe(4);
  expect(bounded!.rewards).toBe(4);
  expect(unbounded!.skippedUpdates).toBe(6);
  expect(bounded!.skippedUpdates).toBe(6);
  for (const { stores, learner } of learners) {
    learner.close();
    stores.close();
  }
});
