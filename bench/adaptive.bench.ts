// Adaptive policies (issues 5 §7 and 15): in-process decide for 4 arms (target p50 <= 10 µs) per
// policy kind, population and per-entity, warm and right after a state change; learning
// throughput, a Learner on a real SQLite store fed the committed events from memory or reading them
// back (target >= 100k rewards/s with lagged rewards), with where its time goes; and the memory per
// pending decision and the bound. Writes bench/results/adaptive-latest.{md,json}.
// ADAPTIVE_REWARDS sets the rewards per learning scenario (default 100,000), ADAPTIVE_PENDING the
// pending decisions of the memory measurement (default 1,000,000), ADAPTIVE_BOUND_DECISIONS the
// decisions through the bound (default 200,000). ADAPTIVE_ONLY=learning runs only the learning
// scenarios (ADAPTIVE_SCENARIO=key,key: those) and prints them, writing no results: for comparing
// two trees in the same minutes. ADAPTIVE_ONLY=book prints only the pending book's growth to
// ADAPTIVE_PENDING decisions (its longest learner step and add, its memory), its drain back to none
// (the longest step, close and removal, the memory left) and its add + lookup + remove.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { decide } from "../src/adaptive/decide.js";
import { encodeFeatures } from "../src/adaptive/features.js";
import { DEFAULT_MAX_PENDING_IN_MEMORY, Learner } from "../src/adaptive/learner.js";
import { Pending, PendingBook } from "../src/adaptive/pending.js";
import { type AdaptivePolicy, adaptiveCatalog } from "../src/adaptive/policy.js";
import { PolicyState, POPULATION, stateKey } from "../src/adaptive/state.js";
import { emptyStats, observe } from "../src/adaptive/stats.js";
import { type CompiledBundle, compileBundle } from "../src/bundle/compile.js";
import type { Bundle, Layer, Policy } from "../src/bundle/types.js";
import { loadEngine } from "../src/engine/loader.js";
import type { Engine } from "../src/engine/engine.js";
import { uuidv7 } from "../src/ids/uuidv7.js";
import { openSqliteStores } from "../src/store/sqlite/open.js";
import type { CommitListener, CommitReads, LearningStore, SequencedEvent, StoredEvent } from "../src/store/types.js";
import { normal, seeded } from "./bandit-sim/random.js";
import { measure, percentile, timeEach } from "./harness/measure.js";
import { formatDuration, loadAverage, machine, machineLoadLine, writeLatest } from "./harness/report.js";
import { nullLearningStore as nullStore } from "./null-learning-store.js";

const REWARDS = Number(process.env.ADAPTIVE_REWARDS ?? 100_000);
const LEARNING_ONLY = process.env.ADAPTIVE_ONLY === "learning";
const BOOK_ONLY = process.env.ADAPTIVE_ONLY === "book";
const ONLY_SCENARIOS = process.env.ADAPTIVE_SCENARIO?.split(",");
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
const WEEK_MS = 7 * 86_400 * 1000;
/** Decisions in a 7-day window at 1,000 decisions/s. */
const WEEK_DECISIONS = WEEK_MS;

setFlagsFromString("--expose-gc"); // for the memory measurement, without a flag on the command line
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
      const arms = entity === POPULATION ? state.population : state.admit(entity, []).arms;
      const key = policy.armKeys[arm]!;
      if (!arms.has(key)) arms.set(key, emptyStats(policy.dimension));
      observe(arms.get(key)!, r, x);
    }
  }
  state.version++;
  return state;
}

// ---- decide latency ----

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
  /** Events between a decision and its reward: 0 puts both in one page; more than a page makes the decision wait as a pending one. */
  readonly lag: number;
  /** Fed from the store's commits in memory (as `vane serve` runs), or read back by the store's scan (a restart's catch-up). */
  readonly source: "feed" | "scan";
  /** The learner's bound on pending decisions in memory. */
  readonly maxPendingInMemory: number;
}

const LAG = 20_000;
/**
 * Decision ids as decide makes them at 10,000 decisions/s: UUIDv7s of a clock that moves, so they
 * ascend as a real stream's do (ids all of one millisecond put every spilled decision on a random
 * page of the pending table).
 */
const DECISIONS_PER_MS = 10;
/** Events appended per call (a batch of decisions or events), and between two learner runs (its timer, 200 ms in the server). */
const APPEND_BATCH = 1000;
const LEARN_EVERY = 10;
const SMALL_BOUND = 1000;
const SCENARIOS: readonly Scenario[] = [
  { key: "thompson-lagged", name: `thompson, reward ${LAG.toLocaleString("en-US")} events after its decision`, kind: KINDS[0]!, perEntity: false, lag: LAG, source: "feed", maxPendingInMemory: DEFAULT_MAX_PENDING_IN_MEMORY },
  { key: "thompson-same-page", name: "thompson, reward right after its decision", kind: KINDS[0]!, perEntity: false, lag: 0, source: "feed", maxPendingInMemory: DEFAULT_MAX_PENDING_IN_MEMORY },
  { key: "thompson-entity-lagged", name: `thompson per entity (${ENTITIES.toLocaleString("en-US")} entities), lagged`, kind: KINDS[0]!, perEntity: true, lag: LAG, source: "feed", maxPendingInMemory: DEFAULT_MAX_PENDING_IN_MEMORY },
  { key: "contextual-lagged", name: "contextual d = 8, lagged", kind: KINDS[4]!, perEntity: false, lag: LAG, source: "feed", maxPendingInMemory: DEFAULT_MAX_PENDING_IN_MEMORY },
  { key: "thompson-lagged-spilled", name: `thompson, lagged, bound of ${SMALL_BOUND.toLocaleString("en-US")} pending decisions in memory (every decision spilled to SQLite and read back)`, kind: KINDS[0]!, perEntity: false, lag: LAG, source: "feed", maxPendingInMemory: SMALL_BOUND },
  { key: "thompson-lagged-scan", name: "thompson, lagged, read back from SQLite (a restart's catch-up: the store's scan)", kind: KINDS[0]!, perEntity: false, lag: LAG, source: "scan", maxPendingInMemory: DEFAULT_MAX_PENDING_IN_MEMORY },
];

/** The decision event decide records (src/server/routes/decide.ts) and the reward a client sends (POST /v1/events). */
function eventPair(compiled: CompiledBundle, policy: AdaptivePolicy, context: Record<string, unknown>, i: number): [StoredEvent, StoredEvent] {
  const arm = i % ARMS;
  const allocation = policy.compiled.allocations[arm]!;
  const decisionId = uuidv7(NOW_MS + Math.floor(i / DECISIONS_PER_MS));
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

type Timings = Record<"feed" | "readLog" | "pendingLookups" | "commit" | "due", number>;

/** The store with each call the learner makes timed (the SQLite stores are synchronous under their promises). */
function timedStore(learning: LearningStore, timings: Timings): LearningStore {
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
    populationArms: () => learning.populationArms(),
    entityArms: (projectId, env, policyId, entities) => learning.entityArms(projectId, env, policyId, entities),
    positions: () => learning.positions(),
    openTrialBins: (bins) => learning.openTrialBins(bins),
    pendingFor: (ids) => timed("pendingLookups", () => learning.pendingFor(ids)),
    due: (now, limit) => timed("due", () => learning.due(now, limit)),
    commit: (step) => timed("commit", () => learning.commit(step)),
    publishOpenTrials: (bins) => learning.publishOpenTrials(bins),
    publishedOpenTrials: () => learning.publishedOpenTrials(),
  };
}

/** One run: its time and how it splits. */
interface LearnRun {
  readonly seconds: number;
  /** CPU time of the process (every thread) over the same intervals: what the learning cost on a machine shared with other work. */
  readonly cpuSeconds: number;
  /** ms per part; "learner" is the rest (turning records into steps, statistics, catalogs, pending decisions). */
  readonly partsMs: Readonly<Record<string, number>>;
  readonly spilled: number;
}

interface LearnRow {
  readonly key: string;
  readonly name: string;
  readonly source: "feed" | "scan";
  readonly maxPendingInMemory: number;
  readonly rewards: number;
  readonly events: number;
  /** Of the median run. */
  readonly rewardsPerSecond: number;
  readonly allRewardsPerSecond: readonly number[];
  /** Of the median run: rewards per second of the process's CPU time. */
  readonly rewardsPerCpuSecond: number;
  readonly run: LearnRun;
}

const PAGE_SIZE = 5000; // the learner's default page
/** Runs per scenario; the median is reported (the 2-core machine is shared, so runs vary). */
const LEARN_RUNS = 3;

/**
 * Fed: the log is appended in batches as the server would commit them, the learner running every
 * LEARN_EVERY batches; timed: the learner's part of each commit (the feed's extraction of
 * records) and its runs. Scan: the log is stored first, then read back in one catch-up.
 */
async function learnOnce(compiled: CompiledBundle, policy: AdaptivePolicy, log: readonly StoredEvent[], scenario: Scenario): Promise<LearnRun> {
  const dir = mkdtempSync(join(tmpdir(), "vane-adaptive-bench-"));
  const stores = openSqliteStores({ dataDir: dir });
  try {
    const timings: Timings = { feed: 0, readLog: 0, pendingLookups: 0, commit: 0, due: 0 };
    const catalog = adaptiveCatalog(compiled);
    let cpuMicros = 0;
    const cpu = () => {
      const { user, system } = process.cpuUsage();
      return user + system;
    };
    const feed = (listener: CommitListener, reads: CommitReads) =>
      stores.events.onCommitted((events, span) => {
        const start = performance.now();
        const cpuStart = cpu();
        listener(events, span);
        timings.feed += performance.now() - start;
        cpuMicros += cpu() - cpuStart;
      }, reads);
    const learner = new Learner({
      store: timedStore(stores.learning, timings),
      catalogs: async () => catalog,
      now: () => NOW_MS,
      pageSize: PAGE_SIZE,
      maxPendingInMemory: scenario.maxPendingInMemory,
      ...(scenario.source === "feed" && { feed }),
    });
    await learner.start();
    let learningMs = 0;
    const learn = async () => {
      const start = performance.now();
      const cpuStart = cpu();
      await learner.catchUp();
      learningMs += performance.now() - start;
      cpuMicros += cpu() - cpuStart;
    };
    for (let at = 0, batch = 0; at < log.length; at += APPEND_BATCH, batch++) {
      await stores.events.append(log.slice(at, at + APPEND_BATCH));
      if (scenario.source === "feed" && batch % LEARN_EVERY === LEARN_EVERY - 1) await learn();
    }
    await learn();
    learner.close();
    const progress = learner.progress();
    if (progress.rewards !== REWARDS) throw new Error(`${policy.id}: learned ${progress.rewards} rewards, expected ${REWARDS}`);
    if (scenario.source === "feed" && progress.scanned > 0) throw new Error(`${policy.id}: ${progress.scanned} events read back, expected all fed`);
    const totalMs = learningMs + timings.feed;
    const accounted = timings.feed + timings.readLog + timings.pendingLookups + timings.commit + timings.due;
    const partsMs = {
      "records from the committed events (the feed)": timings.feed,
      "reading the log (the store's scan: its rows read and decoded)": timings.readLog,
      "spilled pending decisions looked up (SQLite)": timings.pendingLookups,
      "commits (statistics, positions, spilled pending rows)": timings.commit,
      "closing spilled windows (due)": timings.due,
      "learner (steps, statistics, pending decisions in memory)": totalMs - accounted,
    };
    return { seconds: totalMs / 1000, cpuSeconds: cpuMicros / 1e6, partsMs, spilled: (await stores.learning.positions()).stored };
  } finally {
    stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchLearning(compiled: CompiledBundle, scenario: Scenario, contexts: readonly Record<string, unknown>[]): Promise<LearnRow> {
  const policy = adaptiveCatalog(compiled).get(`${scenario.kind.key}${scenario.perEntity ? "-entity" : ""}`)!;
  const log = eventLog(compiled, policy, contexts, scenario.lag);
  const runs: LearnRun[] = [];
  for (let i = 0; i < LEARN_RUNS; i++) runs.push(await learnOnce(compiled, policy, log, scenario));
  runs.sort((a, b) => a.seconds - b.seconds);
  const median = runs[Math.floor(runs.length / 2)]!;
  return {
    key: scenario.key,
    name: scenario.name,
    source: scenario.source,
    maxPendingInMemory: scenario.maxPendingInMemory,
    rewards: REWARDS,
    events: log.length,
    rewardsPerSecond: REWARDS / median.seconds,
    allRewardsPerSecond: runs.map((r) => Math.round(REWARDS / r.seconds)),
    rewardsPerCpuSecond: REWARDS / median.cpuSeconds,
    run: median,
  };
}

// ---- memory per pending decision, and the bound ----

const gc = runInNewContext("gc") as () => void;
const MEMORY_DECISIONS = Number(process.env.ADAPTIVE_PENDING ?? 1_000_000);

/** The JS heap after GC, and the typed arrays' backing stores, which live outside it (the pending book's columns). */
function heapAfterGc(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

/** heapAfterGc once the backing stores a GC freed are let go (their sweep may run after it: a drain's baseline once read 100 MiB high). */
async function settledBytes(): Promise<number> {
  heapAfterGc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  return heapAfterGc();
}


interface MemoryRow {
  readonly key: string;
  readonly name: string;
  readonly decisions: number;
  readonly bytesPerPending: number;
}

/** A started learner without a store, holding up to MEMORY_DECISIONS in memory, fed by `push` as the event store's commits would. */
async function fedLearner(compiled: CompiledBundle, now: () => number): Promise<{ readonly learner: Learner; readonly push: CommitListener }> {
  const catalog = adaptiveCatalog(compiled);
  let listener: CommitListener = () => undefined;
  const learner = new Learner({ store: nullStore, catalogs: async () => catalog, now, maxPendingInMemory: MEMORY_DECISIONS, feed: (l) => ((listener = l), () => undefined) });
  await learner.start();
  return { learner, push: (committed, span) => listener(committed, span) };
}

/**
 * Heap per pending decision: a learner fed MEMORY_DECISIONS decisions (decide's events, no
 * rewards, 7-day window) from memory, heap after GC before and after, the events themselves let go.
 */
async function pendingMemory(compiled: CompiledBundle, policy: AdaptivePolicy, contexts: readonly Record<string, unknown>[], key: string, name: string): Promise<MemoryRow> {
  const { learner, push } = await fedLearner(compiled, () => NOW_MS);
  const before = heapAfterGc();
  let seq = 0;
  for (let i = 0; i < MEMORY_DECISIONS; i += APPEND_BATCH) {
    const batch: SequencedEvent[] = [];
    for (let j = i; j < Math.min(MEMORY_DECISIONS, i + APPEND_BATCH); j++) batch.push({ seq: ++seq, event: eventPair(compiled, policy, contexts[j % contexts.length]!, j)[0] });
    push(batch, { first: batch[0]!.seq, last: seq });
    if ((i / APPEND_BATCH) % LEARN_EVERY === 0) await learner.catchUp();
  }
  await learner.catchUp();
  const after = heapAfterGc();
  if (learner.progress().inMemory !== MEMORY_DECISIONS) throw new Error(`${learner.progress().inMemory} pending decisions in memory, expected ${MEMORY_DECISIONS}`);
  const row = { key, name, decisions: MEMORY_DECISIONS, bytesPerPending: (after - before) / MEMORY_DECISIONS };
  learner.close();
  return row;
}

interface LookupCost {
  readonly held: number;
  /** CPU ns per lookup, median of LOOKUP_ROUNDS: a reward's (its decision held) and a new decision's repeat check (none held). */
  readonly heldNs: number;
  readonly missNs: number;
}

const LOOKUPS = 200_000;
const LOOKUP_ROUNDS = 5;

/**
 * A pending decision looked up by id in a book of MEMORY_DECISIONS, as a reward and a new
 * decision's repeat check do; the ids are fresh strings from JSON each round, as an event's are
 * (a string keeps its hash once computed).
 */
function lookupCost(policy: AdaptivePolicy): LookupCost {
  const book = new PendingBook();
  const ref = { orgId: "org-bench", projectId: "proj-bench", env: "production", policyId: policy.id, rewardEvent: policy.reward.event, windowMs: WEEK_MS, stateKey: stateKey("proj-bench", "production", policy.id) };
  const ids: string[] = [];
  for (let i = 0; i < MEMORY_DECISIONS; i++) {
    const id = uuidv7(NOW_MS + Math.floor(i / 10));
    ids.push(id);
    book.add(new Pending(i + 1, id, ref, policy.armKeys[i % ARMS]!, POPULATION, undefined, NOW_MS + WEEK_MS, 0));
  }
  const heldText = JSON.stringify(Array.from({ length: LOOKUPS }, () => ids[Math.floor(random() * ids.length)]!));
  const missText = JSON.stringify(Array.from({ length: LOOKUPS }, (_, i) => uuidv7(NOW_MS + i)));
  ids.length = 0;
  const perLookup = (text: string, expected: number): number => {
    const rounds: number[] = [];
    for (let round = 0; round < LOOKUP_ROUNDS; round++) {
      const fresh = JSON.parse(text) as string[];
      let found = 0;
      const start = process.cpuUsage(); // CPU time, not wall time: it holds still on a loaded machine
      for (const id of fresh) if (book.of(id) !== undefined) found++;
      const { user, system } = process.cpuUsage(start);
      rounds.push(((user + system) * 1000) / fresh.length);
      if (found !== expected) throw new Error(`${found} of ${fresh.length} lookups found, expected ${expected}`);
    }
    return percentile(rounds, 0.5);
  };
  return { held: book.size, heldNs: perLookup(heldText, LOOKUPS), missNs: perLookup(missText, 0) };
}

interface Checkpoint {
  readonly held: number;
  /** Growth per pending decision since the learner started: typed arrays' backing stores, and the JS heap, after GC. */
  readonly arrayBytes: number;
  readonly heapBytes: number;
}

interface Growth {
  readonly checkpoints: readonly Checkpoint[];
  readonly stepP50Ns: number;
  readonly stepP99Ns: number;
  readonly stepMaxNs: number;
  /** Decisions held after the longest step and the next longest: whether they sit where the book grows. */
  readonly longestAt: readonly number[];
  readonly addP50Ns: number;
  readonly addP99Ns: number;
  readonly addP999Ns: number;
  readonly addMaxNs: number;
}

/**
 * Issue 33: the pending book grown to MEMORY_DECISIONS through the learner (7-day window, nothing
 * closes), each learner step of APPEND_BATCH decisions timed, its memory read at 100 k, 300 k and the
 * end; then a book alone grown as far, each add timed. Growing the book must not stall a step.
 */
async function bookGrowth(compiled: CompiledBundle, policy: AdaptivePolicy, contexts: readonly Record<string, unknown>[]): Promise<Growth> {
  const { learner, push } = await fedLearner(compiled, () => NOW_MS);
  const usage = () => {
    gc();
    gc();
    return process.memoryUsage();
  };
  const before = usage();
  const marks = [100_000, 300_000, MEMORY_DECISIONS].filter((n) => n <= MEMORY_DECISIONS);
  const checkpoints: Checkpoint[] = [];
  const steps: number[] = [];
  let seq = 0;
  for (let i = 0; i < MEMORY_DECISIONS; i += APPEND_BATCH) {
    const batch: SequencedEvent[] = [];
    for (let j = i; j < Math.min(MEMORY_DECISIONS, i + APPEND_BATCH); j++) batch.push({ seq: ++seq, event: eventPair(compiled, policy, contexts[j % contexts.length]!, j)[0] });
    const start = process.hrtime.bigint();
    push(batch, { first: batch[0]!.seq, last: seq });
    await learner.catchUp();
    steps.push(Number(process.hrtime.bigint() - start));
    if (seq === marks[checkpoints.length]) {
      const now = usage();
      checkpoints.push({ held: seq, arrayBytes: (now.arrayBuffers - before.arrayBuffers) / seq, heapBytes: (now.heapUsed - before.heapUsed) / seq });
    }
  }
  if (learner.progress().inMemory !== MEMORY_DECISIONS) throw new Error(`${learner.progress().inMemory} pending decisions in memory, expected ${MEMORY_DECISIONS}`);
  learner.close();

  const book = new PendingBook();
  const ref = { orgId: "org-bench", projectId: "proj-bench", env: "production", policyId: policy.id, rewardEvent: policy.reward.event, windowMs: WEEK_MS, stateKey: stateKey("proj-bench", "production", policy.id) };
  const ids = Array.from({ length: MEMORY_DECISIONS }, (_, i) => uuidv7(NOW_MS + Math.floor(i / DECISIONS_PER_MS)));
  const adds = timeEach(MEMORY_DECISIONS, (i) => book.addFields(i + 1, ids[i]!, ref, policy.armKeys[i % ARMS]!, POPULATION, undefined, NOW_MS + WEEK_MS, 0));
  // The first steps compile the learner's code (~50 ms): the growth's stalls are looked for after them.
  steps.splice(0, WARM_STEPS);
  const sortedSteps = Float64Array.from(steps).sort();
  const longestAt = [...steps.keys()].sort((a, b) => steps[b]! - steps[a]!).slice(0, 3).map((i) => Math.min(MEMORY_DECISIONS, (i + 1 + WARM_STEPS) * APPEND_BATCH));
  return {
    checkpoints,
    stepP50Ns: percentile(sortedSteps, 0.5),
    stepP99Ns: percentile(sortedSteps, 0.99),
    stepMaxNs: percentile(sortedSteps, 1),
    longestAt,
    addP50Ns: percentile(adds, 0.5),
    addP99Ns: percentile(adds, 0.99),
    addP999Ns: percentile(adds, 0.999),
    addMaxNs: percentile(adds, 1),
  };
}

const WARM_STEPS = 10;
const CHURN_HELD = 100_000;

/** A book holding CHURN_HELD decisions at a steady state: each operation adds one, looks one up by id and closes the oldest. */
function bookChurn(policy: AdaptivePolicy) {
  const book = new PendingBook();
  const ref = { orgId: "org-bench", projectId: "proj-bench", env: "production", policyId: policy.id, rewardEvent: policy.reward.event, windowMs: 1000, stateKey: stateKey("proj-bench", "production", policy.id) };
  const ids = Array.from({ length: 1 << 18 }, (_, i) => uuidv7(NOW_MS + i));
  const mask = ids.length - 1;
  let n = 0;
  const add = () => {
    book.addFields(n + 1, ids[n & mask]!, ref, policy.armKeys[n & 3]!, POPULATION, undefined, n + 1, 0);
    n++;
  };
  while (n < CHURN_HELD) add();
  return {
    key: "book-churn",
    name: `pending book: add + lookup + remove among ${CHURN_HELD.toLocaleString("en-US")}`,
    callsPerSample: 1000,
    run: (count: number) => {
      for (let c = 0; c < count; c++) {
        add();
        if (book.of(ids[(n - 1 - (c & 1023) * 64) & mask]!) === undefined) throw new Error("a held decision not found");
        book.closeDue(n - CHURN_HELD);
      }
    },
  };
}

/** Decisions whose windows close per drain step: 100 ms of them at DECISIONS_PER_MS. */
const DRAIN_STEP = 1000;
/** A drain step's rewards are for decisions this far ahead of the ones closing (still open). */
const REWARD_AHEAD = 50_000;
const DRAIN_MARKS = [250_000, 10_000, 0];

interface DrainMark {
  readonly held: number;
  /** Typed arrays' backing stores + JS heap after GC, above the learner's before it held any. */
  readonly bytes: number;
}

interface Drain {
  readonly marks: readonly DrainMark[];
  readonly steps: number;
  readonly stepP50Ns: number;
  readonly stepP99Ns: number;
  readonly stepMaxNs: number;
  /** Decisions held after the longest step. */
  readonly longestAt: number;
}

/**
 * Issue 33, the way back: a learner holding MEMORY_DECISIONS pending decisions (received 10 a ms,
 * 7-day window) drained to none through its public path: each step the clock passes 100 ms more
 * of windows (DRAIN_STEP decisions close) and DRAIN_STEP rewards arrive for decisions still open;
 * each step (catchUp: the rewards looked up and marked, the windows closed) timed, the memory read
 * at 1 M, 250 k, 10 k and 0 held.
 */
async function bookDrain(compiled: CompiledBundle, policy: AdaptivePolicy, contexts: readonly Record<string, unknown>[]): Promise<Drain> {
  let nowMs = NOW_MS;
  const { learner, push } = await fedLearner(compiled, () => nowMs);
  const before = await settledBytes();
  const receivedAt = (i: number) => new Date(NOW_MS + Math.floor(i / DECISIONS_PER_MS)).toISOString();
  let seq = 0;
  for (let i = 0; i < MEMORY_DECISIONS; i += APPEND_BATCH) {
    const batch: SequencedEvent[] = [];
    for (let j = i; j < Math.min(MEMORY_DECISIONS, i + APPEND_BATCH); j++) batch.push({ seq: ++seq, event: { ...eventPair(compiled, policy, contexts[j % contexts.length]!, j)[0], receivedAt: receivedAt(j) } });
    push(batch, { first: batch[0]!.seq, last: seq });
    if ((i / APPEND_BATCH) % LEARN_EVERY === 0) await learner.catchUp();
  }
  await learner.catchUp();
  const held = () => learner.progress().inMemory;
  if (held() !== MEMORY_DECISIONS) throw new Error(`${held()} pending decisions in memory, expected ${MEMORY_DECISIONS}`);
  const marks: DrainMark[] = [{ held: held(), bytes: (await settledBytes()) - before }];
  const steps: number[] = [];
  const heldAfter: number[] = [];
  nowMs = NOW_MS + WEEK_MS - 1;
  for (let closing = 0; held() > 0; closing += DRAIN_STEP) {
    nowMs += DRAIN_STEP / DECISIONS_PER_MS;
    const batch: SequencedEvent[] = [];
    for (let j = closing + REWARD_AHEAD; j < Math.min(MEMORY_DECISIONS, closing + REWARD_AHEAD + DRAIN_STEP); j++) {
      batch.push({ seq: ++seq, event: { ...eventPair(compiled, policy, contexts[j % contexts.length]!, j)[1], receivedAt: new Date(nowMs).toISOString() } });
    }
    const start = process.hrtime.bigint();
    if (batch.length > 0) push(batch, { first: batch[0]!.seq, last: seq });
    await learner.catchUp();
    steps.push(Number(process.hrtime.bigint() - start));
    heldAfter.push(held());
    const mark = DRAIN_MARKS[marks.length - 1];
    if (mark !== undefined && held() <= mark) marks.push({ held: held(), bytes: (await settledBytes()) - before });
  }
  learner.close();
  const longest = steps.indexOf(Math.max(...steps));
  const sorted = Float64Array.from(steps).sort();
  return { marks, steps: steps.length, stepP50Ns: percentile(sorted, 0.5), stepP99Ns: percentile(sorted, 0.99), stepMaxNs: percentile(sorted, 1), longestAt: heldAfter[longest]! };
}

/** The book alone filled to MEMORY_DECISIONS (10 a ms), then emptied DRAIN_STEP at a time by closes, or by the spill's removals of the oldest; each call timed (ns, sorted). */
function bookEmptied(policy: AdaptivePolicy, by: "close" | "remove"): { times: Float64Array; emptyBytes: number; drainedBytes: number; slots: number } {
  const times = new Float64Array(MEMORY_DECISIONS / DRAIN_STEP + 1);
  const base = heapAfterGc();
  const book = new PendingBook();
  const emptyBytes = heapAfterGc() - base;
  const ref = { orgId: "org-bench", projectId: "proj-bench", env: "production", policyId: policy.id, rewardEvent: policy.reward.event, windowMs: WEEK_MS, stateKey: stateKey("proj-bench", "production", policy.id) };
  for (let i = 0; i < MEMORY_DECISIONS; i++) {
    const decidedAt = NOW_MS + Math.floor(i / DECISIONS_PER_MS);
    book.addFields(i + 1, uuidv7(decidedAt), ref, policy.armKeys[i % ARMS]!, POPULATION, undefined, decidedAt + WEEK_MS, 0);
  }
  let calls = 0;
  for (let closing = DRAIN_STEP; book.size > 0; closing += DRAIN_STEP) {
    const out = by === "remove" ? book.oldest(DRAIN_STEP, Number.NEGATIVE_INFINITY, DRAIN_STEP) : [];
    const start = process.hrtime.bigint();
    if (by === "remove") book.removeOldest(out);
    else book.closeDue(NOW_MS + WEEK_MS + closing / DECISIONS_PER_MS - 1);
    times[calls++] = Number(process.hrtime.bigint() - start);
  }
  // What the book (read below, so still held) keeps once emptied.
  const drainedBytes = heapAfterGc() - base;
  return { times: times.subarray(0, calls).sort(), emptyBytes, drainedBytes, slots: book.slots };
}

interface BoundRun {
  readonly decisions: number;
  readonly bound: number;
  readonly inMemory: number;
  readonly stored: number;
  /** Heap growth after GC with the learner holding its pending decisions, in bytes. */
  readonly heapBytes: number;
  /** Bytes of the pending table and its index in the database, per stored pending decision. */
  readonly diskBytesPerStored: number;
  readonly decisionsPerSecond: number;
}

/** A real store and a small bound: memory stays at the bound, the rest goes to the pending table. */
async function boundRun(compiled: CompiledBundle, policy: AdaptivePolicy, contexts: readonly Record<string, unknown>[], decisions: number, bound: number): Promise<BoundRun> {
  const dir = mkdtempSync(join(tmpdir(), "vane-adaptive-bound-"));
  const stores = openSqliteStores({ dataDir: dir });
  try {
    const catalog = adaptiveCatalog(compiled);
    const learner = new Learner({ store: stores.learning, catalogs: async () => catalog, now: () => NOW_MS, maxPendingInMemory: bound, feed: (l) => stores.events.onCommitted(l) });
    await learner.start();
    const before = heapAfterGc();
    let learningMs = 0;
    for (let i = 0, batch = 0; i < decisions; i += APPEND_BATCH, batch++) {
      const events: StoredEvent[] = [];
      for (let j = i; j < Math.min(decisions, i + APPEND_BATCH); j++) events.push(eventPair(compiled, policy, contexts[j % contexts.length]!, j)[0]);
      await stores.events.append(events);
      if (batch % LEARN_EVERY === LEARN_EVERY - 1) {
        const start = performance.now();
        await learner.catchUp();
        learningMs += performance.now() - start;
      }
    }
    const start = performance.now();
    await learner.catchUp();
    learningMs += performance.now() - start;
    const heapBytes = heapAfterGc() - before;
    const { inMemory, stored } = learner.progress();
    learner.close();
    const db = new Database(join(dir, "vane.db"), { readonly: true });
    const bytes = db.prepare<[], number>("SELECT sum(pgsize) FROM dbstat WHERE name IN ('pending_decisions', 'pending_closes')").pluck().get() ?? 0;
    db.close();
    return { decisions, bound, inMemory, stored, heapBytes, diskBytesPerStored: bytes / Math.max(1, stored), decisionsPerSecond: decisions / (learningMs / 1000) };
  } finally {
    stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- run and report ----

const readLoad = loadAverage();
const compiled = compileBundle(benchBundle(), engine);
const catalog = adaptiveCatalog(compiled);
const contexts = makeContexts();
// A 7-day window long enough that nothing closes while measured.
const weekBundle = benchBundle();
for (const l of weekBundle.layers) for (const p of l.policies) p.reward = { ...p.reward!, windowSeconds: 7 * 86_400 };
const weekCompiled = compileBundle(weekBundle, engine);
const weekCatalog = adaptiveCatalog(weekCompiled);
if (BOOK_ONLY) {
  const growth = await bookGrowth(weekCompiled, weekCatalog.get("thompson-binary")!, contexts);
  for (const c of growth.checkpoints) {
    console.log(`${c.held.toLocaleString("en-US")} held: ${c.arrayBytes.toFixed(1)} B typed arrays + ${c.heapBytes.toFixed(1)} B heap = ${(c.arrayBytes + c.heapBytes).toFixed(1)} B a pending decision`);
  }
  const ms = (ns: number) => `${(ns / 1e6).toFixed(2)} ms`;
  console.log(`learner steps of ${APPEND_BATCH} decisions after the first ${WARM_STEPS}: p50 ${ms(growth.stepP50Ns)}, p99 ${ms(growth.stepP99Ns)}, longest ${ms(growth.stepMaxNs)} (the 3 longest ending at ${growth.longestAt.map((n) => n.toLocaleString("en-US")).join(", ")} held)`);
  console.log(`book adds: p50 ${growth.addP50Ns.toFixed(0)} ns, p99 ${growth.addP99Ns.toFixed(0)} ns, p99.9 ${growth.addP999Ns.toFixed(0)} ns, longest ${ms(growth.addMaxNs)}`);
  const drain = await bookDrain(weekCompiled, weekCatalog.get("thompson-binary")!, contexts);
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  for (const m of drain.marks) console.log(`drained to ${m.held.toLocaleString("en-US")} held: ${mib(m.bytes)} above the empty learner's${m.held > 0 ? ` = ${(m.bytes / m.held).toFixed(1)} B a pending decision` : ""}`);
  console.log(`drain steps (${DRAIN_STEP} windows closing and ${DRAIN_STEP} rewards each, ${drain.steps} steps): p50 ${ms(drain.stepP50Ns)}, p99 ${ms(drain.stepP99Ns)}, longest ${ms(drain.stepMaxNs)} (at ${drain.longestAt.toLocaleString("en-US")} held)`);
  for (const by of ["close", "remove"] as const) {
    const { times, emptyBytes, drainedBytes, slots } = bookEmptied(weekCatalog.get("thompson-binary")!, by);
    const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
    console.log(`book alone emptied by ${by === "close" ? "closeDue" : "removeOldest"} of ${DRAIN_STEP}: p50 ${ms(percentile(times, 0.5))}, p99 ${ms(percentile(times, 0.99))}, longest ${ms(percentile(times, 1))}; it holds ${kib(drainedBytes)} emptied (${slots} slots), ${kib(emptyBytes)} new`);
  }
  const churn = measure([bookChurn(weekCatalog.get("thompson-binary")!)], { timeMs: 3000, warmupMs: 500 })[0]!;
  console.log(`add + lookup + remove among ${CHURN_HELD.toLocaleString("en-US")}: ${churn.meanNs.toFixed(0)} ns mean (±${churn.rmePercent.toFixed(1)}%), p50 ${churn.p50Ns.toFixed(0)} ns`);
  const lookups = lookupCost(weekCatalog.get("thompson-binary")!);
  console.log(`lookup among ${lookups.held.toLocaleString("en-US")}: ${lookups.heldNs.toFixed(0)} ns held, ${lookups.missNs.toFixed(0)} ns not held`);
  process.exit(0);
}
const decideRows: DecideRow[] = [];
let step = 0;
const steps = KINDS.length * 2 + SCENARIOS.length + 5;
for (const kind of LEARNING_ONLY ? [] : KINDS) {
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
for (const scenario of SCENARIOS.filter((s) => ONLY_SCENARIOS === undefined || ONLY_SCENARIOS.includes(s.key))) {
  process.stdout.write(`[${++step}/${steps}] learning, ${scenario.name}: ${REWARDS.toLocaleString("en-US")} rewards … `);
  const row = await benchLearning(compiled, scenario, contexts);
  console.log(`${Math.round(row.rewardsPerSecond).toLocaleString("en-US")} rewards/s (${row.run.seconds.toFixed(2)} s), ${Math.round(row.rewardsPerCpuSecond).toLocaleString("en-US")} per CPU second`);
  learnRows.push(row);
}
if (LEARNING_ONLY) process.exit(0);

const memoryRows: MemoryRow[] = [];
for (const [key, name] of [
  ["thompson", "thompson"],
  ["thompson-entity", `thompson per entity (${ENTITIES.toLocaleString("en-US")} entities)`],
  ["contextual-thompson", "contextual d = 8"],
] as const) {
  process.stdout.write(`[${++step}/${steps}] memory, ${name}: ${MEMORY_DECISIONS.toLocaleString("en-US")} pending decisions … `);
  const policyKey = key === "thompson" ? "thompson-binary" : key === "thompson-entity" ? "thompson-binary-entity" : key;
  const row = await pendingMemory(weekCompiled, weekCatalog.get(policyKey)!, contexts, key, name);
  console.log(`${Math.round(row.bytesPerPending)} B each`);
  memoryRows.push(row);
}
process.stdout.write(`[${++step}/${steps}] reward lookup among ${MEMORY_DECISIONS.toLocaleString("en-US")} pending decisions … `);
const lookup = lookupCost(weekCatalog.get("thompson-binary")!);
console.log(`${lookup.heldNs.toFixed(0)} ns held, ${lookup.missNs.toFixed(0)} ns not held`);
const BOUND_DECISIONS = Number(process.env.ADAPTIVE_BOUND_DECISIONS ?? 200_000);
const BOUND = 20_000;
process.stdout.write(`[${++step}/${steps}] bound: ${BOUND_DECISIONS.toLocaleString("en-US")} decisions through a bound of ${BOUND.toLocaleString("en-US")} … `);
const bound = await boundRun(weekCompiled, weekCatalog.get("thompson-binary")!, contexts, BOUND_DECISIONS, BOUND);
console.log(`${bound.inMemory.toLocaleString("en-US")} in memory, ${bound.stored.toLocaleString("en-US")} stored, heap +${(bound.heapBytes / 2 ** 20).toFixed(1)} MiB, ${Math.round(bound.diskBytesPerStored)} B on disk per stored one`);

const m = machine();
const load = readLoad();
const p50Target = (row: DecideRow) => (row.p50Ns <= 10_000 ? "✓" : "✗");
const share = (ms: number, total: number) => `${ms.toFixed(0)} ms (${((100 * ms) / total).toFixed(0)}%)`;
const perPending = memoryRows[0]!.bytesPerPending;
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(bytes < 2 ** 30 ? 2 : 1)} GiB`;
const md = [
  "### Decide, in process (4 arms; target p50 ≤ 10 µs)",
  "",
  "| policy | p50 | p99 | mean | p50 ≤ 10 µs | first decision after a state change, p50 |",
  "|---|---:|---:|---:|:---:|---:|",
  ...decideRows.map((r) => `| ${r.name}${r.perEntity ? `, per entity (${ENTITIES.toLocaleString("en-US")} entities)` : ""} | ${formatDuration(r.p50Ns)} | ${formatDuration(r.p99Ns)} | ${formatDuration(r.meanNs)} | ${p50Target(r)} | ${formatDuration(r.afterChangeP50Ns)} |`),
  "",
  `\`decide()\` from src/adaptive/decide.ts on a learned state of ${OBSERVATIONS.toLocaleString("en-US")} observations, contexts cycling over ${CONTEXTS.toLocaleString("en-US")} users and ${ENTITIES.toLocaleString("en-US")} accounts; each call timed alone (the timer adds ~${formatDuration(timerNs)}). Warm: the state's decision cache is filled (Thompson's propensities, contextual arms' A⁻¹ and θ), as it is between learner steps. After a state change: the first decision of a new state version recomputes them (binary Thompson: 10,000 joint draws; value Thompson: the exact Normal win probabilities). Contextual Thompson computes each decision's exact propensity (numerical integration), which no cache can hold (it depends on the context).`,
  "",
  `### Learning (target ≥ 100k rewards/s lagged, memory bounded)`,
  "",
  `| scenario | source | rewards/s (median of ${LEARN_RUNS}) | all runs | rewards per CPU second | learning time | events | spilled |`,
  "|---|---|---:|---:|---:|---:|---:|---:|",
  ...learnRows.map((r) => `| ${r.name} | ${r.source} | ${Math.round(r.rewardsPerSecond).toLocaleString("en-US")} | ${r.allRewardsPerSecond.map((x) => x.toLocaleString("en-US")).join(", ")} | ${Math.round(r.rewardsPerCpuSecond).toLocaleString("en-US")} | ${r.run.seconds.toFixed(2)} s | ${r.events.toLocaleString("en-US")} | ${r.run.spilled.toLocaleString("en-US")} |`),
  "",
  "Where the learning time goes (median run):",
  "",
  `| part | ${learnRows.map((r) => r.key).join(" | ")} |`,
  `|---|${learnRows.map(() => "---:").join("|")}|`,
  ...Object.keys(learnRows[0]!.run.partsMs).map((part) => `| ${part} | ${learnRows.map((r) => share(r.run.partsMs[part]!, r.run.seconds * 1000)).join(" | ")} |`),
  "",
  `A \`Learner\` on \`openSqliteStores\` (a file in the OS temp dir, synchronous = FULL) learning from ${REWARDS.toLocaleString("en-US")} decision events and as many reward track events, shaped as decide and POST /v1/events store them (decision ids UUIDv7s of a clock at ${(DECISIONS_PER_MS * 1000).toLocaleString("en-US")} decisions/s), ${PAGE_SIZE.toLocaleString("en-US")} events per step. Each decision's reward follows it directly or ${LAG.toLocaleString("en-US")} events later (the decision waits as a pending decision meanwhile: in memory, or in SQLite past the bound). Fed: the log is appended in batches of ${APPEND_BATCH.toLocaleString("en-US")} events, the learner running every ${LEARN_EVERY} batches and taking the committed events from memory (EventStore.onCommitted); timed: the feed's work inside each commit plus the learner's runs (appends not counted). Scan: the log is stored first, then read back in one catch-up, as after a restart. "Learner" is what remains of the learning time.`,
  "",
  "### Memory per pending decision, and the bound",
  "",
  "| policy | pending decisions in memory | heap per pending decision |",
  "|---|---:|---:|",
  ...memoryRows.map((r) => `| ${r.name} | ${r.decisions.toLocaleString("en-US")} | ${Math.round(r.bytesPerPending)} B |`),
  "",
  `Heap after GC plus typed arrays' backing stores (process.memoryUsage() heapUsed + arrayBuffers), before and after a learner (bound above the count, 7-day window) was fed ${MEMORY_DECISIONS.toLocaleString("en-US")} decide decision events without rewards; the events themselves let go. Everything the learner keeps per pending decision: the decision id, its columns, the id table and the log-order queue, the delay model's bins.`,
  "",
  `Looking a pending decision up by id among ${lookup.held.toLocaleString("en-US")} (\`PendingBook.of\`, CPU time, median of ${LOOKUP_ROUNDS} rounds of ${LOOKUPS.toLocaleString("en-US")} ids fresh from JSON): ${lookup.heldNs.toFixed(0)} ns when it is held (a reward's), ${lookup.missNs.toFixed(0)} ns when none is (a new decision's repeat check).`,
  "",
  `Through a real store with a bound of ${bound.bound.toLocaleString("en-US")}: ${bound.decisions.toLocaleString("en-US")} decisions left ${bound.inMemory.toLocaleString("en-US")} in memory (heap +${(bound.heapBytes / 2 ** 20).toFixed(1)} MiB after GC) and ${bound.stored.toLocaleString("en-US")} in the pending table at ${Math.round(bound.diskBytesPerStored)} B each on disk (table and index, dbstat); learned at ${Math.round(bound.decisionsPerSecond).toLocaleString("en-US")} decisions/s with the spill.`,
  "",
  `A 7-day window at 1,000 decisions/s holds ${WEEK_DECISIONS.toLocaleString("en-US")} pending decisions. All in memory: ${gib(WEEK_DECISIONS * perPending)}. With the default bound (${DEFAULT_MAX_PENDING_IN_MEMORY.toLocaleString("en-US")}): ${gib(DEFAULT_MAX_PENDING_IN_MEMORY * perPending)} of heap, and ${gib((WEEK_DECISIONS - DEFAULT_MAX_PENDING_IN_MEMORY) * bound.diskBytesPerStored)} of pending table on disk (the event log of that week is larger still).`,
  "",
  `Machine: ${machineLoadLine(m, load)}. Run ${new Date().toISOString()}.`,
].join("\n");
console.log(`\n${md}\n`);
const settings = { rewards: REWARDS, arms: ARMS, entities: ENTITIES, observations: OBSERVATIONS, lag: LAG, pageSize: PAGE_SIZE, learnRuns: LEARN_RUNS, appendBatch: APPEND_BATCH, learnEvery: LEARN_EVERY, memoryDecisions: MEMORY_DECISIONS };
writeLatest("adaptive", md, { date: new Date().toISOString(), machine: m, load, settings, timerNs, decide: decideRows, learning: learnRows, memory: memoryRows, lookup, bound });
