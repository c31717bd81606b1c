// The events route's own stages, in this process, without sockets, HTTP or a store: the time per
// event of each step a 100-event batch of the bench (bench/http/scenarios.ts) takes on the server's
// event loop before the log writer has it. Each round times 100 batches; the figure is the
// fastest of the later rounds (a shared VM slows rounds, never speeds them: the fastest is
// nearest the CPU time), so a change to one stage shows where the whole server's CPU per event
// (bench:http) is too noisy to.
//
//   node --import tsx bench/instructions/events-stages.ts [--rounds 60]
//
// parse: JSON.parse of the body; scan: the nesting depth and unstorable-escape scans (request.ts);
// prepare: validation and the stored events (event-batch.ts); encode: the log row's text;
// facts: what the writer needs beside it (row-facts.ts); post: the hand-off to a worker thread.
import { Worker } from "node:worker_threads";
import { parseArgs } from "node:util";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { uuidv7 } from "../../src/ids/uuidv7.js";
import { prepareBatch } from "../../src/server/event-batch.js";
import { compileEventCatalog } from "../../src/server/events/schemas.js";
import { textDepth } from "../../src/server/json-depth.js";
import { MAX_JSON_DEPTH } from "../../src/server/request.js";
import { DEFAULT_MAX_EVENT_AGE_MS } from "../../src/store/event-time.js";
import { rowFacts } from "../../src/store/sqlite/writer/row-facts.js";
import type { KeyRecord } from "../../src/store/types.js";
import { eventBatchPool } from "../http/scenarios.js";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "60" } } });
const ROUNDS = Number(values.rounds);
const BATCHES_PER_ROUND = 100;
const STAGES = ["parse", "scan", "prepare", "encode", "facts", "post"] as const;
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

const bundle = demoBundle(new Date().toISOString());
const catalog = compileEventCatalog(bundle.eventDefinitions);
const key = { orgId: bundle.orgId, projectId: bundle.projectId } as KeyRecord;
const batches = eventBatchPool();
// The writer's side of the hand-off: it takes the message and drops it.
const writer = new Worker("require('node:worker_threads').parentPort.on('message', () => {});", { eval: true });

const perEvent = new Map<string, number[]>([...STAGES, "all"].map((stage) => [stage, []]));
let next = 0;
let events = 0;
for (let round = 0; round < ROUNDS; round++) {
  const spent = new Map<string, number>(STAGES.map((stage) => [stage, 0]));
  const started = performance.now();
  let roundEvents = 0;
  for (let b = 0; b < BATCHES_PER_ROUND; b++) {
    const text = batches[next++ % batches.length]!;
    let at = performance.now();
    const lap = (stage: (typeof STAGES)[number]) => {
      const now = performance.now();
      spent.set(stage, spent.get(stage)! + now - at);
      at = now;
    };
    const body = JSON.parse(text) as { events: unknown[] };
    lap("parse");
    const deep = textDepth(text) > MAX_JSON_DEPTH;
    const unstorable = UNSTORABLE_ESCAPE.test(text);
    lap("scan");
    const now = Date.now();
    const batch = await prepareBatch(body.events, {
      key, checkDepth: deep, checkUnstorable: unstorable, projectHeader: undefined, defaultEnv: "production",
      receivedAt: new Date(now).toISOString(), receivedAtMs: now, sentAtMs: undefined, maxEventAgeMs: DEFAULT_MAX_EVENT_AGE_MS,
      owns: () => true, catalog: () => catalog, newId: () => uuidv7(now),
    });
    lap("prepare");
    const row = batch.row.text;
    lap("encode");
    const facts = rowFacts(batch.events);
    lap("facts");
    writer.postMessage({ type: "append", items: [{ id: b, sentAt: now, text: row, format: batch.row.format, count: batch.events.length, facts }] });
    lap("post");
    roundEvents += batch.events.length;
  }
  const all = performance.now() - started;
  for (const stage of STAGES) perEvent.get(stage)!.push((spent.get(stage)! * 1000) / roundEvents);
  perEvent.get("all")!.push((all * 1000) / roundEvents);
  events = roundEvents / BATCHES_PER_ROUND;
  // The writer's thread and V8's helpers get their turn between rounds, as between requests.
  await new Promise((resolve) => setImmediate(resolve));
}
await writer.terminate();

const later = (xs: number[]) => xs.slice(Math.floor(xs.length / 2));
console.log(`µs per event, fastest of the later ${Math.ceil(ROUNDS / 2)} rounds of ${BATCHES_PER_ROUND} batches (${events} events each):`);
console.log([...perEvent].map(([stage, xs]) => `${stage} ${Math.min(...later(xs)).toFixed(2)}`).join("  "));
