// Adaptive policies (issue 5 §7): in-process decide for 4 arms (target p50 <= 10 µs) per policy
// kind, population and per-entity, warm and right after a state change; and learning throughput,
// a Learner catching up on decision and reward events in a real SQLite store (target >= 100k
// rewards/s), with where its time goes. Writes bench/results/adaptive-latest.{md,json}.
// ADAPTIVE_REWARDS sets the rewards per learning scenario (default 100,000).
import Database from "better-sqlite3";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { decide } from "../src/adaptive/decide.js";
import { encodeFeatures } from "../src/adaptive/features.js";
import { Learner } from "../src/adaptive/learner.js";
import { type AdaptivePolicy, adaptiveCatalog } from "../src/adaptive/policy.js";
import { PolicyState, POPULATION } from "../src/adaptive/state.js";
import { emptyStats, observe } from "../src/adaptive/stats.js";
import { type CompiledBundle, compileBundle } from "../src/bundle/compile.js";
import type { Bundle, Layer, Policy } from "../src/bundle/types.js";
import { loadEngine } from "../src/engine/loader.js";
import type { Engine } from "../src/engine/engine.js";
import { uuidv7 } from "../src/ids/uuidv7.js";
import { openSqliteStores } from "../src/store/sqlite/open.js";
import type { LearningStore, StoredEvent } from "../src/store/types.js";
import { normal, seeded } from "./bandit-sim/random.js";
import { formatDuration, machine, machineLine } from "./report.js";

const REWARDS = Number(process.env.ADAPTIVE_REWARDS ?? 100_000);
const ARMS = 4;
const ENTITIES = 1000;
const CONTEXTS = 4096;
/** Observations behind each policy's learned state (per-entity policies: spread over the entities). */
const OBSERVATIONS = 20_000;
/** Each decide task is timed for about this long, within these call counts. */
const TASK_NS = 2e9;
const MIN_CALLS = 5000;
const MAX_CALLS = 200_000;
const COLD_CALLS = 300;
const NOW_MS = Date.parse("2026-11-21T12:00:00.000Z");

const engine = await loadEngine();
const random = seeded(0xada9);

// ---- the bundle: each kind, population and per-entity, in a layer of its own ----

const FEATURES = [
  { name: "segment", type: "categorical", values: ["new", "returning", "loyal"] },
  { name: "device", type: "categorical", values: ["mobile", "desktop"] },
  { name: "tenure", type: "numeric" },
  { name: "spend", type: "numeric" },
];

interface Kind {
  readonly key: string;
  readonly name: string;
  readonly policy: Pick<Policy, "kind" | "params"> & { readonly rewardType: "binary" | "value" };
}

const KINDS: readonly Kind[] = [
  { key: "thompson-binary", name: "thompson, binary reward", policy: { kind: "thompson", params: {}, rewardType: "binary" } },
  { key: "thompson-value", name: "thompson, value reward", policy: { kind: "thompson", params: {}, rewardType: "value" } },
  { key: "ucb1", name: "ucb1", policy: { kind: "ucb1", params: {}, rewardType: "binary" } },
  { key: "epsilon-greedy", name: "epsilon_greedy", policy: { kind: "epsilon_greedy", params: {}, rewardType: "binary" } },
  { key: "contextual-thompson", name: "contextual, linear Thompson, d = 8", policy: { kind: "contextual", params: { features: FEATURES }, rewardType: "binary" } },
  { key: "contextual-linucb", name: "contextual, LinUCB, d = 8", policy: { kind: "contextual", params: { features: FEATURES, algorithm: "linucb" }, rewardType: "binary" } },
];

function layer(kind: Kind, perEntity: boolean): Layer {
  const id = `${kind.key}${perEntity ? "-entity" : ""}`;
  return {
    id,
    policies: [
      {
        id,
        key: id,
        state: "running",
        kind: kind.policy.kind,
        conditions: [],
        allocations: Array.from({ length: ARMS }, (_, arm) => ({ id: `${id}-${arm}`, name: `arm ${arm}`, key: `arm-${arm}`, bucketRange: [0, 999] as [number, number], overrides: { [`${id}.arm`]: arm } })),
        reward: { event: "conversion", type: kind.policy.rewardType, windowSeconds: 3600 },
        params: kind.policy.params,
        ...(perEntity && { entityKey: "accountId" }),
      },
    ],
  };
}

function benchBundle(): Bundle {
  const layers = KINDS.flatMap((kind) => [layer(kind, false), layer(kind, true)]);
  return {
    version: "2026-11-21T12:00:00.000Z",
    orgId: "org-bench",
    projectId: "proj-bench",
    env: "production",
    hashing: { unitKey: "userId", bucketCount: 1000 },
    parameters: layers.map((l) => ({ key: `${l.id}.arm`, type: "integer" as const, default: 0, layerId: l.id, namespace: l.id })),
    layers,
  };
}

function makeContexts(): Record<string, unknown>[] {
  return Array.from({ length: CONTEXTS }, (_, i) => ({
    userId: `user-${(i * 7919) % 100_000}`,
    accountId: `account-${i % ENTITIES}`,
    segment: ["new", "returning", "loyal"][i % 3],
    device: i % 5 < 3 ? "mobile" : "desktop",
    tenure: random() * 3,
    spend: random(),
  }));
}

/** A reward for an arm: conversions at 3–6%, values around 1–1.3 with sd 1. */
function reward(policy: AdaptivePolicy, arm: number): number {
  return policy.reward.type === "binary" ? (random() < 0.03 + 0.01 * arm ? 1 : 0) : 1 + 0.1 * arm + normal(random);
}

/** A learned state as the learner leaves it: the population's statistics and, per entity, its own. */
function learnedState(policy: AdaptivePolicy, contexts: readonly Record<string, unknown>[]): PolicyState {
  const state = new PolicyState();
  for (let i = 0; i < OBSERVATIONS; i++) {
    const context = contexts[i % contexts.length]!;
    const arm = i % ARMS;
    const x = policy.dimension > 0 ? encodeFeatures(policy.params.features, context) : undefined;
    const r = reward(policy, arm);
    const entities = policy.entityKey === undefined ? [POPULATION] : [POPULATION, String(context[policy.entityKey])];
    for (const entity of entities) {
      const arms = state.arms(entity);
      const key = policy.armKeys[arm]!;
      if (!arms.has(key)) arms.set(key, emptyStats(policy.dimension));
      observe(arms.get(key)!, r, x);
    }
  }
  state.version++;
  return state;
}

// ---- decide latency ----

const percentile = (sorted: Float64Array, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

function timeEach(count: number, run: (i: number) => unknown): Float64Array {
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    run(i);
    times[i] = Number(process.hrtime.bigint() - start);
  }
  return times.sort();
}

interface DecideRow {
  readonly kind: string;
  readonly name: string;
  readonly perEntity: boolean;
  readonly calls: number;
  readonly p50Ns: number;
  readonly p99Ns: number;
  readonly meanNs: number;
  /** The first decision after the learned state changed: Thompson's propensities and contextual arms are recomputed. */
  readonly afterChangeP50Ns: number;
}

function benchDecide(compiled: CompiledBundle<Engine>, policy: AdaptivePolicy, kind: Kind, contexts: readonly Record<string, unknown>[]): DecideRow {
  const state = learnedState(policy, contexts);
  const mask = contexts.length - 1;
  const once = (i: number) => {
    const outcome = decide(compiled, policy, state, { context: contexts[i & mask]!, now: 0 });
    if ("problem" in outcome) throw new Error(outcome.problem);
  };
  timeEach(CONTEXTS, once); // fills every entity's cache and warms the code
  const probe = timeEach(2000, once);
  const calls = Math.round(Math.min(MAX_CALLS, Math.max(MIN_CALLS, TASK_NS / percentile(probe, 0.5))));
  const times = timeEach(calls, once);
  let mean = 0;
  for (const t of times) mean += t / calls;
  const afterChange = timeEach(COLD_CALLS, (i) => {
    state.version++;
    once(i * 13);
  });
  const perEntity = policy.entityKey !== undefined;
  return { kind: kind.key, name: kind.name, perEntity, calls, p50Ns: percentile(times, 0.5), p99Ns: percentile(times, 0.99), meanNs: mean, afterChangeP50Ns: percentile(afterChange, 0.5) };
}

// ---- learning throughput ----

interface Scenario {
  readonly key: string;
  readonly name: string;
  readonly kind: Kind;
  readonly perEntity: boolean;
  /** Events between a decision and its reward: 0 puts both in one page; more than a page makes the learner read the decision back from SQLite. */
  readonly lag: number;
}

const LAG = 20_000;
const SCENARIOS: readonly Scenario[] = [
  { key: "thompson-lagged", name: `thompson, reward ${LAG.toLocaleString("en-US")} events after its decision`, kind: KINDS[0]!, perEntity: false, lag: LAG },
  { key: "thompson-same-page", name: "thompson, reward right after its decision", kind: KINDS[0]!, perEntity: false, lag: 0 },
  { key: "thompson-entity-lagged", name: `thompson per entity (${ENTITIES.toLocaleString("en-US")} entities), lagged`, kind: KINDS[0]!, perEntity: true, lag: LAG },
  { key: "contextual-lagged", name: "contextual d = 8, lagged", kind: KINDS[4]!, perEntity: false, lag: LAG },
];

/** The decision event decide records (src/server/routes/decide.ts) and the reward a client sends (POST /v1/events). */
function eventPair(compiled: CompiledBundle, policy: AdaptivePolicy, context: Record<string, unknown>, i: number): [StoredEvent, StoredEvent] {
  const arm = i % ARMS;
  const allocation = policy.compiled.allocations[arm]!;
  const decisionId = uuidv7(NOW_MS);
  const timestamp = new Date(NOW_MS).toISOString();
  const unit = String(context.userId);
  const tenant = { orgId: compiled.bundle.orgId, projectId: compiled.bundle.projectId, env: compiled.bundle.env };
  const features = policy.dimension > 0 ? Array.from(encodeFeatures(policy.params.features, context)) : undefined;
  const entityId = policy.entityKey === undefined ? undefined : String(context[policy.entityKey]);
  const layers = [{ layerId: policy.layer.id, bucket: i % 1000, policyId: policy.id, policyKey: policy.key, allocationId: allocation.id, allocationName: allocation.name, allocationKey: allocation.key, probability: 0.25 }];
  const decisionBody = { type: "decision", unitKey: unit, timestamp, assignments: { [`${policy.id}.arm`]: arm }, layers, latencyMs: 0.01, decisionId, configVersion: compiled.bundle.version, ...tenant, entityId, features };
  const value = policy.reward.type === "value" ? { value: reward(policy, arm) } : {};
  const trackBody = { type: "track", unitKey: unit, timestamp, event: policy.reward.event, decisionId, ...value, ...tenant };
  const common = { receivedAt: timestamp, ...tenant, unitKey: unit, timestamp, decisionId };
  return [
    { id: uuidv7(NOW_MS), ...common, type: "decision", body: decisionBody },
    { id: uuidv7(NOW_MS), ...common, type: "track", name: policy.reward.event, body: trackBody },
  ];
}

/** Decisions in order, each reward `lag` events after its decision. */
function eventLog(compiled: CompiledBundle, policy: AdaptivePolicy, contexts: readonly Record<string, unknown>[], lag: number): StoredEvent[] {
  const pairs = Array.from({ length: REWARDS }, (_, i) => eventPair(compiled, policy, contexts[i % contexts.length]!, i));
  const log: StoredEvent[] = [];
  for (let j = 0; j < REWARDS + lag; j++) {
    if (j < REWARDS) log.push(pairs[j]![0]);
    if (j >= lag) log.push(pairs[j - lag]![1]);
  }
  return log;
}

type Timings = Record<"readLog" | "pendingLookups" | "commit" | "due", number>;

/** The store with each call the learner makes timed (the SQLite stores are synchronous under their promises). */
function timedStores(learning: LearningStore, timings: Timings): LearningStore {
  const timed = async <T>(key: keyof Timings, call: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    try {
      return await call();
    } finally {
      timings[key] += performance.now() - start;
    }
  };
  return {
    scan: (after, limit, span) => timed("readLog", () => learning.scan(after, limit, span)),
    arms: () => learning.arms(),
    checkpoint: () => learning.checkpoint(),
    openTrials: () => learning.openTrials(),
    pendingFor: (ids) => timed("pendingLookups", () => learning.pendingFor(ids)),
    due: (now, limit) => timed("due", () => learning.due(now, limit)),
    commit: (step) => timed("commit", () => learning.commit(step)),
  };
}

/**
 * How the log read splits: SQLite's rows alone, then JSON.parse of their bodies (a second
 * connection, after the run). Also what a lean read would cost: only the columns the learner
 * uses, as arrays (better-sqlite3's raw mode) rather than objects.
 */
function readSplit(dbFile: string, pageSize: number): { selectMs: number; jsonMs: number; leanSelectMs: number } {
  const db = new Database(dbFile, { readonly: true });
  const full = db.prepare("SELECT seq, id, received_at, org_id, project_id, env, type, unit_key, timestamp, name, decision_id, discovered, body FROM events WHERE seq > ? ORDER BY seq LIMIT ?");
  const lean = db.prepare("SELECT seq, type, project_id, env, name, decision_id, received_at, body FROM events WHERE seq > ? ORDER BY seq LIMIT ?").raw(true);
  let selectMs = 0;
  let jsonMs = 0;
  let leanSelectMs = 0;
  for (let after = 0; ; ) {
    let start = performance.now();
    const rows = full.all(after, pageSize) as { seq: number; body: string }[];
    selectMs += performance.now() - start;
    if (rows.length === 0) break;
    start = performance.now();
    for (const row of rows) JSON.parse(row.body);
    jsonMs += performance.now() - start;
    start = performance.now();
    lean.all(after, pageSize);
    leanSelectMs += performance.now() - start;
    after = rows[rows.length - 1]!.seq;
  }
  db.close();
  return { selectMs, jsonMs, leanSelectMs };
}

/** One catch-up: its time, how it splits, and the same log read again three ways afterwards. */
interface LearnRun {
  readonly seconds: number;
  readonly appendSeconds: number;
  /** ms per part of the catch-up; "learner" is the rest (turning events into steps, statistics, catalogs). */
  readonly partsMs: Readonly<Record<string, number>>;
  /** ms to read the whole log again after the run, on a second connection. */
  readonly rereadMs: Readonly<Record<string, number>>;
}

interface LearnRow extends LearnRun {
  readonly key: string;
  readonly name: string;
  readonly rewards: number;
  readonly events: number;
  /** Of the median run. */
  readonly rewardsPerSecond: number;
  readonly allRewardsPerSecond: readonly number[];
}

const PAGE_SIZE = 5000; // the learner's default page
/** Runs per scenario; the median is reported (the 2-core machine is shared, so runs vary). */
const LEARN_RUNS = 3;

async function learnOnce(compiled: CompiledBundle, policy: AdaptivePolicy, log: readonly StoredEvent[]): Promise<LearnRun> {
  const dir = mkdtempSync(join(tmpdir(), "vane-adaptive-bench-"));
  const stores = openSqliteStores({ dataDir: dir });
  try {
    let start = performance.now();
    for (let at = 0; at < log.length; at += 1000) await stores.events.append(log.slice(at, at + 1000));
    const appendSeconds = (performance.now() - start) / 1000;
    const timings: Timings = { readLog: 0, pendingLookups: 0, commit: 0, due: 0 };
    const timed = timedStores(stores.learning, timings);
    const catalog = adaptiveCatalog(compiled);
    const learner = new Learner({ store: timed, catalogs: async () => catalog, now: () => NOW_MS, pageSize: PAGE_SIZE });
    await learner.start();
    start = performance.now();
    await learner.catchUp();
    const totalMs = performance.now() - start;
    const learned = learner.progress().rewards;
    if (learned !== REWARDS) throw new Error(`${policy.id}: learned ${learned} rewards, expected ${REWARDS}`);
    const reread = readSplit(join(dir, "vane.db"), PAGE_SIZE);
    const accounted = timings.readLog + timings.pendingLookups + timings.commit + timings.due;
    const partsMs = {
      "reading the log (the learner's scan: SQLite filter, JSON.parse of decisions)": timings.readLog,
      "pending decisions looked up (SQLite)": timings.pendingLookups,
      "commit (statistics, pending rows, checkpoint)": timings.commit,
      "closing windows (due)": timings.due,
      "learner (steps, statistics, catalogs)": totalMs - accounted,
    };
    const rereadMs = { "all columns, rows as objects": reread.selectMs, "JSON.parse of the bodies": reread.jsonMs, "the learner's 8 columns, rows as arrays": reread.leanSelectMs };
    return { seconds: totalMs / 1000, appendSeconds, partsMs, rereadMs };
  } finally {
    stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchLearning(compiled: CompiledBundle, scenario: Scenario, contexts: readonly Record<string, unknown>[]): Promise<LearnRow> {
  const policy = adaptiveCatalog(compiled).get(`${scenario.kind.key}${scenario.perEntity ? "-entity" : ""}`)!;
  const log = eventLog(compiled, policy, contexts, scenario.lag);
  const runs: LearnRun[] = [];
  for (let i = 0; i < LEARN_RUNS; i++) runs.push(await learnOnce(compiled, policy, log));
  runs.sort((a, b) => a.seconds - b.seconds);
  const median = runs[Math.floor(runs.length / 2)]!;
  return {
    key: scenario.key,
    name: scenario.name,
    rewards: REWARDS,
    events: log.length,
    rewardsPerSecond: REWARDS / median.seconds,
    allRewardsPerSecond: runs.map((r) => Math.round(REWARDS / r.seconds)),
    ...median,
  };
}

// ---- run and report ----

const loadAtStart = loadavg()[0]!;
const compiled = compileBundle(benchBundle(), engine);
const catalog = adaptiveCatalog(compiled);
const contexts = makeContexts();
const decideRows: DecideRow[] = [];
let step = 0;
const steps = KINDS.length * 2 + SCENARIOS.length;
for (const kind of KINDS) {
  for (const perEntity of [false, true]) {
    const policy = catalog.get(`${kind.key}${perEntity ? "-entity" : ""}`)!;
    process.stdout.write(`[${++step}/${steps}] decide, ${kind.name}${perEntity ? ", per entity" : ""} … `);
    const row = benchDecide(compiled, policy, kind, contexts);
    console.log(`p50 ${formatDuration(row.p50Ns)}, p99 ${formatDuration(row.p99Ns)} over ${row.calls.toLocaleString("en-US")} calls; after a state change ${formatDuration(row.afterChangeP50Ns)}`);
    decideRows.push(row);
  }
}
const timerNs = percentile(timeEach(100_000, () => undefined), 0.5);

const learnRows: LearnRow[] = [];
for (const scenario of SCENARIOS) {
  process.stdout.write(`[${++step}/${steps}] learning, ${scenario.name}: ${REWARDS.toLocaleString("en-US")} rewards … `);
  const row = await benchLearning(compiled, scenario, contexts);
  console.log(`${Math.round(row.rewardsPerSecond).toLocaleString("en-US")} rewards/s (${row.seconds.toFixed(2)} s)`);
  learnRows.push(row);
}

const m = machine();
const load = { start: loadAtStart, end: loadavg()[0]! };
const p50Target = (row: DecideRow) => (row.p50Ns <= 10_000 ? "✓" : "✗");
const share = (ms: number, total: number) => `${ms.toFixed(0)} ms (${((100 * ms) / total).toFixed(0)}%)`;
const md = [
  "### Decide, in process (4 arms; target p50 ≤ 10 µs)",
  "",
  "| policy | p50 | p99 | mean | p50 ≤ 10 µs | first decision after a state change, p50 |",
  "|---|---:|---:|---:|:---:|---:|",
  ...decideRows.map((r) => `| ${r.name}${r.perEntity ? `, per entity (${ENTITIES.toLocaleString("en-US")} entities)` : ""} | ${formatDuration(r.p50Ns)} | ${formatDuration(r.p99Ns)} | ${formatDuration(r.meanNs)} | ${p50Target(r)} | ${formatDuration(r.afterChangeP50Ns)} |`),
  "",
  `\`decide()\` from src/adaptive/decide.ts on a learned state of ${OBSERVATIONS.toLocaleString("en-US")} observations, contexts cycling over ${CONTEXTS.toLocaleString("en-US")} users and ${ENTITIES.toLocaleString("en-US")} accounts; each call timed alone (the timer adds ~${formatDuration(timerNs)}). Warm: the state's decision cache is filled (Thompson's propensities, contextual arms' A⁻¹ and θ), as it is between learner steps. After a state change: the first decision of a new state version recomputes them (binary Thompson: 10,000 joint draws; value Thompson: the exact Normal win probabilities). Contextual Thompson computes each decision's exact propensity (numerical integration), which no cache can hold (it depends on the context).`,
  "",
  `### Learning (target ≥ 100k rewards/s)`,
  "",
  `| scenario | rewards/s (median of ${LEARN_RUNS}) | all runs | catch-up | events |`,
  "|---|---:|---:|---:|---:|",
  ...learnRows.map((r) => `| ${r.name} | ${Math.round(r.rewardsPerSecond).toLocaleString("en-US")} | ${r.allRewardsPerSecond.map((x) => x.toLocaleString("en-US")).join(", ")} | ${r.seconds.toFixed(2)} s | ${r.events.toLocaleString("en-US")} |`),
  "",
  "Where the catch-up time goes:",
  "",
  `| part | ${learnRows.map((r) => r.key).join(" | ")} |`,
  `|---|${learnRows.map(() => "---:").join("|")}|`,
  ...Object.keys(learnRows[0]!.partsMs).map((part) => `| ${part} | ${learnRows.map((r) => share(r.partsMs[part]!, r.seconds * 1000)).join(" | ")} |`),
  "",
  "The same log read again after the run, on a second connection (what the read costs, and what a lean read would):",
  "",
  `| read | ${learnRows.map((r) => r.key).join(" | ")} |`,
  `|---|${learnRows.map(() => "---:").join("|")}|`,
  ...Object.keys(learnRows[0]!.rereadMs).map((part) => `| ${part} | ${learnRows.map((r) => `${r.rereadMs[part]!.toFixed(0)} ms`).join(" | ")} |`),
  "",
  `A \`Learner\` on \`openSqliteStores\` (a file in the OS temp dir, synchronous = FULL) catching up on ${REWARDS.toLocaleString("en-US")} decision events and as many reward track events, shaped as decide and POST /v1/events store them, ${PAGE_SIZE.toLocaleString("en-US")} events per step. Each decision's reward follows it directly (one page) or ${LAG.toLocaleString("en-US")} events later (the decision is stored as pending, then read back and deleted). "Learner" is what remains of the catch-up time.`,
  "",
  `Machine: ${machineLine(m)}; load average ${load.start.toFixed(1)} at the start, ${load.end.toFixed(1)} at the end. Run ${new Date().toISOString()}.`,
].join("\n");
console.log(`\n${md}\n`);
const out = new URL("./results/", import.meta.url);
mkdirSync(out, { recursive: true });
writeFileSync(new URL("adaptive-latest.md", out), `${md}\n`);
writeFileSync(new URL("adaptive-latest.json", out), `${JSON.stringify({ date: new Date().toISOString(), machine: m, load, settings: { rewards: REWARDS, arms: ARMS, entities: ENTITIES, observations: OBSERVATIONS, lag: LAG, pageSize: PAGE_SIZE, learnRuns: LEARN_RUNS }, timerNs, decide: decideRows, learning: learnRows }, null, 2)}\n`);
