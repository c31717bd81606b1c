// The engine benchmark (npm run bench): sha256-v2 bucketing through the wasm builds, the TS
// reference and node:crypto, plus the bandit samplers. It reports figures and writes them to
// bench/results/; it never fails on a time.
import type { Engine } from "../src/engine/engine.js";
import { ENGINE_URL, SCALAR_ENGINE_URL, loadEngine } from "../src/engine/loader.js";
import { bucket as referenceBucket } from "../src/engine/reference.js";
import { type Workload, measure } from "./harness/measure.js";
import { createHashBucket, oneShotHashBucket } from "./node-crypto.js";
import { type RatioSpec, formatRatio, machine, machineLine, markdown, ratios, textTable, writeLatest } from "./harness/report.js";
import {
  ARMS, BATCH_SIZE, BUCKET_COUNT, LAYER_SALTS, MAX_KEY_BYTES, SALT, UNIT_COUNT, UNIT_MASK,
  UNIT_MAX_LENGTH, UNIT_MIN_LENGTH, WIN_DRAWS, makeBatches, makeUnits,
} from "./scenarios/engine.js";

// BENCH_TIME_MS shortens a run for a smoke test; published figures use the default.
const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 500);
const WARMUP_MS = Math.min(200, TIME_MS);

const units = makeUnits();
const batches = makeBatches(units);
const simd = await loadEngine(ENGINE_URL);
const scalar = await loadEngine(SCALAR_ENGINE_URL);

// Every result goes here, so no call's work can be optimized away as unused.
let sink = 0;

// Each factory returns its own closure with its own loop, so the timed loop calls one
// implementation and the only per-sample overhead is the wrapper in measure.ts.
function singleCalls(engine: Engine): (count: number) => void {
  let next = 0;
  return (count) => {
    for (let i = 0; i < count; i++, next = (next + 1) & UNIT_MASK) sink ^= engine.bucket(SALT, units[next]!, BUCKET_COUNT);
  };
}

function saltCalls(engine: Engine): (count: number) => void {
  const set = engine.saltSet(LAYER_SALTS);
  const out = new Uint32Array(LAYER_SALTS.length);
  let next = 0;
  return (count) => {
    for (let i = 0; i < count; i++, next = (next + 1) & UNIT_MASK) sink ^= engine.bucketSalts(set, units[next]!, BUCKET_COUNT, out)[0]!;
  };
}

function batchCalls(engine: Engine): (count: number) => void {
  const out = new Uint32Array(BATCH_SIZE);
  let next = 0;
  return (count) => {
    for (let i = 0; i < count; i++, next = (next + 1) % batches.length) {
      sink ^= engine.bucketUnits(SALT, batches[next]!, BUCKET_COUNT, out)[0]!;
    }
  };
}

function perCallBaseline(bucket: (salt: string, unit: string, n: number) => number): (count: number) => void {
  let next = 0;
  return (count) => {
    for (let i = 0; i < count; i++, next = (next + 1) & UNIT_MASK) sink ^= bucket(SALT, units[next]!, BUCKET_COUNT);
  };
}

const workloads: Workload[] = [
  { key: "bucket-simd", name: "wasm bucket, SIMD build", run: singleCalls(simd), callsPerSample: 16, bucketsPerOp: 1 },
  { key: "bucket-scalar", name: "wasm bucket, scalar build", run: singleCalls(scalar), callsPerSample: 16, bucketsPerOp: 1 },
  { key: "salts-simd", name: "wasm bucketSalts 1 unit × 8 salts, SIMD", run: saltCalls(simd), callsPerSample: 4, bucketsPerOp: 8 },
  { key: "salts-scalar", name: "wasm bucketSalts 1 unit × 8 salts, scalar", run: saltCalls(scalar), callsPerSample: 4, bucketsPerOp: 8 },
  { key: "units-simd", name: `wasm bucketUnits ${BATCH_SIZE} units, SIMD`, run: batchCalls(simd), callsPerSample: 1, bucketsPerOp: BATCH_SIZE },
  { key: "units-scalar", name: `wasm bucketUnits ${BATCH_SIZE} units, scalar`, run: batchCalls(scalar), callsPerSample: 1, bucketsPerOp: BATCH_SIZE },
  { key: "reference", name: "TS reference bucket", run: perCallBaseline(referenceBucket), callsPerSample: 4, bucketsPerOp: 1 },
  { key: "create-hash", name: "node:crypto createHash + BigInt mod", run: perCallBaseline(createHashBucket), callsPerSample: 16, bucketsPerOp: 1 },
];
if (oneShotHashBucket) {
  workloads.push({ key: "crypto-hash", name: "node:crypto crypto.hash + BigInt mod", run: perCallBaseline(oneShotHashBucket), callsPerSample: 16, bucketsPerOp: 1 });
}
workloads.push(
  {
    key: "thompson-beta",
    name: "wasm thompsonBeta, 4 arms (SIMD build)",
    run: (count) => {
      for (let i = 0; i < count; i++) sink ^= simd.thompsonBeta(ARMS.alpha, ARMS.beta);
    },
    callsPerSample: 16,
  },
  {
    key: "win-probabilities",
    name: `wasm winProbabilities, 4 arms × ${WIN_DRAWS / 1000}k draws`,
    run: (count) => {
      for (let i = 0; i < count; i++) sink ^= simd.winProbabilities(ARMS, WIN_DRAWS)[0]! * 1e6;
    },
    callsPerSample: 1,
  },
);

const RATIOS: RatioSpec[] = [
  { key: "wasmSingleVsCryptoHash", label: "wasm single call (SIMD) / crypto.hash", numerator: "bucket-simd", denominator: "crypto-hash" },
  { key: "wasmBatchedSimdVsCryptoHash", label: "wasm batched (SIMD) / crypto.hash", numerator: "units-simd", denominator: "crypto-hash" },
  { key: "batchedSimdVsScalar", label: "wasm batched SIMD / batched scalar", numerator: "units-simd", denominator: "units-scalar" },
];

/** Figures for a path that computes wrong buckets would be meaningless: compare before timing. */
function crossCheck(): string[] {
  const sample = units.slice(0, 256);
  const expected = sample.map((u) => referenceBucket(SALT, u, BUCKET_COUNT));
  const problems: string[] = [];
  const compare = (what: string, actual: ArrayLike<number>, want: readonly number[]) => {
    const bad = want.findIndex((b, i) => actual[i] !== b);
    if (bad >= 0) problems.push(`${what} disagrees with the reference (first at unit ${JSON.stringify(sample[bad])})`);
  };
  for (const [build, engine] of [["SIMD", simd], ["scalar", scalar]] as const) {
    compare(`${build} bucket`, sample.map((u) => engine.bucket(SALT, u, BUCKET_COUNT)), expected);
    compare(`${build} bucketUnits`, engine.bucketUnits(SALT, sample, BUCKET_COUNT), expected);
    const set = engine.saltSet(LAYER_SALTS);
    const unit = sample[0]!;
    compare(`${build} bucketSalts`, engine.bucketSalts(set, unit, BUCKET_COUNT), LAYER_SALTS.map((s) => referenceBucket(s, unit, BUCKET_COUNT)));
  }
  compare("createHash", sample.map((u) => createHashBucket(SALT, u, BUCKET_COUNT)), expected);
  if (oneShotHashBucket) compare("crypto.hash", sample.map((u) => oneShotHashBucket!(SALT, u, BUCKET_COUNT)), expected);
  return problems;
}

const host = machine();
console.log(`vane engine benchmark — ${machineLine(host)}`);
console.log(`${UNIT_COUNT} unit ids of ${UNIT_MIN_LENGTH}–${UNIT_MAX_LENGTH} chars, keys ≤ ${MAX_KEY_BYTES} bytes; ${TIME_MS} ms per task after ${WARMUP_MS} ms warmup\n`);
if (!simd.simd || scalar.simd) console.warn(`warning: build flags look swapped (SIMD build simd=${simd.simd}, scalar build simd=${scalar.simd})`);
const problems = crossCheck();
for (const p of problems) console.warn(`warning: ${p}; its figures are suspect`);

const date = new Date().toISOString();
const rows = measure(workloads, { timeMs: TIME_MS, warmupMs: WARMUP_MS });
const computed = ratios(rows, RATIOS);

console.log(`\n${textTable(rows)}\n`);
for (const r of computed) console.log(formatRatio(r));

const notes = [
  `Units: ${UNIT_COUNT} seeded random ids of ${UNIT_MIN_LENGTH}–${UNIT_MAX_LENGTH} ASCII characters, salt + "." + unit ≤ ${MAX_KEY_BYTES} bytes (one SHA-256 block), bucketCount ${BUCKET_COUNT}.`,
  "ops/s is 1 / mean latency; buckets/s is ops/s × buckets per call. Tasks shorter than ~10 µs are timed in samples of several calls (see callsPerSample in the JSON), so their p99 is over those samples' per-call means, not over single calls.",
  ...(oneShotHashBucket ? [] : ["crypto.hash needs Node ≥ 20.12; this Node lacks it, so its row and ratios are missing."]),
  ...problems.map((p) => `Warning: ${p}.`),
];
const report = {
  date,
  machine: host,
  settings: {
    timeMs: TIME_MS, warmupMs: WARMUP_MS, bucketCount: BUCKET_COUNT, unitCount: UNIT_COUNT,
    unitLength: [UNIT_MIN_LENGTH, UNIT_MAX_LENGTH], salt: SALT, layerSalts: LAYER_SALTS, batchSize: BATCH_SIZE,
    arms: ARMS, winDraws: WIN_DRAWS,
  },
  rows,
  ratios: computed,
  notes,
};
const written = writeLatest("engine", markdown(report), report);
console.log(`\nwrote ${written.join(", ")}`);
