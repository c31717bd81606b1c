// The learner past its bound on pending decisions in memory, where every long-running server ends
// up (a window of hours outlasts any bound: 1,000,000 is 17 minutes at 1,000 decisions/s): each
// decision spilled to SQLite, then closed there. In-process, a learner fed this process's commits
// on a real SQLite store, as `vane serve` runs it; decisions of two layers (windows of 120 and 45 s)
// on a clock moving `--ms-per-decision` a decision, so windows close during the run as they do in
// a steady state. `--fill` decisions first, then `--decisions` counted: the learner's time on the
// event loop per decision, and its store calls.
//
//   node --import tsx bench/past-bound.ts [--bound 2000] [--fill 10000] [--decisions 20000] [--ms-per-decision 10] [--unmarked]
//   (--bound 10000000: the same decisions under the bound; --unmarked: decisions as a client posts
//   them, without MINTED_DECISION, which is also what the learner did with every decision before it)
//
// Instructions, robust on a shared machine: run it under
//   valgrind --tool=callgrind --separate-threads=yes --dump-before=crc32_z node --import tsx bench/past-bound.ts …
// the counted decisions call zlib.crc32 before and after, so callgrind.out.PID.2-01 is the event
// loop over them alone (the appends' JSON included, the same in every variant).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { crc32 } from "node:zlib";
import { Learner } from "../src/adaptive/learner.js";
import { uuidv7 } from "../src/ids/uuidv7.js";
import { openSqliteStores } from "../src/store/sqlite/index.js";
import { type LearningStore, type LeaseClaim, MINTED_DECISION, type StoredEvent } from "../src/store/types.js";
import { LearnerLog, T0, twoPolicyCatalogs } from "../test/adaptive/learner-log.js";

const { values } = parseArgs({
  options: {
    bound: { type: "string", default: "2000" },
    fill: { type: "string", default: "10000" },
    decisions: { type: "string", default: "20000" },
    "ms-per-decision": { type: "string", default: "10" },
    unmarked: { type: "boolean", default: false },
  },
});
const BOUND = Number(values.bound);
const FILL = Number(values.fill);
const DECISIONS = Number(values.decisions);
const MS_PER_DECISION = Number(values["ms-per-decision"]);
/** Decisions per append (a few requests' commits), and between two learner runs (its timer's 200 ms at ~10 k/s). */
const APPEND = 20;
const LEARN_EVERY = 2000;

const CALLS = ["pendingFor", "commit", "closeCounted", "due", "scan"] as const;
type Call = (typeof CALLS)[number];
const spent = Object.fromEntries(CALLS.map((c) => [c, { ms: 0, calls: 0, rows: 0 }])) as Record<Call, { ms: number; calls: number; rows: number }>;

/** The store with the learner's calls timed (SQLite's are synchronous under their promises). */
function timed(learning: LearningStore): LearningStore {
  const time = async <T>(call: Call, rows: number, work: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await work();
    } finally {
      spent[call].ms += performance.now() - start;
      spent[call].calls++;
      spent[call].rows += rows;
    }
  };
  return Object.assign(Object.create(learning) as LearningStore, {
    pendingFor: (ids: readonly string[]) => time("pendingFor", ids.length, () => learning.pendingFor(ids)),
    commit: (step: Parameters<LearningStore["commit"]>[0]) => time("commit", step.addPending.length + step.removePending.length, () => learning.commit(step)),
    due: (now: number, limit: number) => time("due", 0, () => learning.due(now, limit)),
    closeCounted: learning.closeCounted && ((now: number, limit: number, lease: LeaseClaim | undefined) => time("closeCounted", 0, () => learning.closeCounted!(now, limit, lease))),
    scan: (after: number, limit: number, span: number) => time("scan", 0, () => learning.scan(after, limit, span)),
  });
}

const { catalogs } = await twoPolicyCatalogs();
const log = new LearnerLog();
let made = 0;
const clock = () => T0 + made * MS_PER_DECISION;

/** A decision as resolve records one: its id minted for it (decision-event.ts), unless --unmarked. */
function decision(): StoredEvent {
  log.now = clock();
  const e = log.decision(uuidv7(log.now), made % 3, undefined, true);
  made++;
  const { id, receivedAt, orgId, projectId, env, type, unitKey, timestamp, decisionId, body } = e;
  return values.unmarked ? { id, receivedAt, orgId, projectId, env, type, unitKey, timestamp, decisionId, body } : { id, receivedAt, orgId, projectId, env, type, unitKey, timestamp, decisionId, body, [MINTED_DECISION]: true };
}

const dir = mkdtempSync(join(tmpdir(), "vane-past-bound-"));
const stores = openSqliteStores({ dataDir: dir });
const learner = new Learner({ store: timed(stores.learning), catalogs, now: clock, maxPendingInMemory: BOUND, feed: (listener, reads) => stores.events.onCommitted(listener, reads) });

/** Appends `count` decisions, the learner running every LEARN_EVERY; its time (ms). */
async function run(count: number): Promise<number> {
  let learning = 0;
  const learn = async () => {
    const start = performance.now();
    await learner.catchUp();
    learning += performance.now() - start;
  };
  for (let i = 0; i < count; i += APPEND) {
    await stores.events.append(Array.from({ length: Math.min(APPEND, count - i) }, decision));
    if ((i + APPEND) % LEARN_EVERY === 0) await learn();
  }
  await learn();
  return learning;
}

try {
  await learner.start();
  await run(FILL);
  for (const s of Object.values(spent)) Object.assign(s, { ms: 0, calls: 0, rows: 0 });
  const before = learner.progress();
  crc32("counted decisions start"); // callgrind --dump-before=crc32_z
  const learningMs = await run(DECISIONS);
  crc32("counted decisions end");
  const after = learner.progress();
  const us = (ms: number) => `${((ms * 1000) / DECISIONS).toFixed(2)} µs`;
  const calls = CALLS.map((c) => `${c} ${us(spent[c].ms)} (${spent[c].calls} calls, ${spent[c].rows} rows)`).join("; ");
  console.log(`bound ${BOUND.toLocaleString("en-US")}, ${values.unmarked ? "unmarked" : "minted"} decisions, ${MS_PER_DECISION} ms apart: after ${FILL.toLocaleString("en-US")}, ${DECISIONS.toLocaleString("en-US")} counted`);
  console.log(`held ${after.inMemory.toLocaleString("en-US")}, stored ${after.stored.toLocaleString("en-US")}; over the counted: closed ${(after.closedWithoutReward - before.closedWithoutReward).toLocaleString("en-US")}, fed ${(after.fed - before.fed).toLocaleString("en-US")}, scanned ${(after.scanned - before.scanned).toLocaleString("en-US")}`);
  console.log(`learner per decision: ${us(learningMs)}; its store calls: ${calls}`);
} finally {
  learner.close();
  await stores.close();
  rmSync(dir, { recursive: true, force: true });
}
