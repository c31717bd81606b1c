// The serialization an events request costs on its way to the per-event table, per event, in
// one process: the old chain (JSON.stringify of the batch, the structured clone to the writer
// thread, JSON.parse there, JSON.stringify of each body for the table) against encodeBatch's
// (one text per event, fields packed, the clone, the rows sliced from the text).
// Run: node --import tsx bench/encode-batch.bench.ts
import { deserialize, serialize } from "node:v8";
import type { StoredEvent } from "../src/store/types.js";
import { BatchText, encodeBatch } from "../src/store/sqlite/writer/batch-text.js";

const BATCH_EVENTS = 100;
const ROUNDS = 20_000;

const events: StoredEvent[] = Array.from({ length: BATCH_EVENTS }, (_, i) => {
  const type = i % 2 ? "track" : "exposure";
  const unitKey = `user-${i}`;
  const timestamp = "2026-11-25T20:59:59.000Z";
  return {
    id: `0193a1b2-c3d4-7e5f-8a9b-${String(i).padStart(12, "0")}`,
    receivedAt: "2026-11-25T21:00:00.000Z",
    orgId: "org_1",
    projectId: "proj_1",
    env: "production",
    type,
    unitKey,
    timestamp,
    ...(i % 2 === 1 && { name: "purchase" }),
    clientId: `c-${i}`,
    ...(i % 3 === 0 && { discovered: true }),
    body: { type, unitKey, timestamp, id: `c-${i}`, event: "purchase", properties: { amount: 12.5, currency: "EUR", items: 3 }, orgId: "org_1", projectId: "proj_1", env: "production" },
  };
});

function perEventMicros(run: () => unknown): number {
  for (let i = 0; i < ROUNDS / 10; i++) run();
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i++) run();
  return ((performance.now() - start) * 1000) / ROUNDS / BATCH_EVENTS;
}

const before = (): unknown => {
  const { json } = deserialize(serialize({ json: JSON.stringify(events) })) as { json: string };
  return (JSON.parse(json) as StoredEvent[]).map((event) => JSON.stringify(event.body));
};
const after = (): unknown => {
  const batch = new BatchText(deserialize(serialize(encodeBatch(events))) as ReturnType<typeof encodeBatch>);
  return Array.from({ length: batch.count }, (_, i) => batch.row(i, i + 1));
};
const encodeOnly = (): unknown => encodeBatch(events);
const stringifyOnly = (): unknown => JSON.stringify(events);

for (let round = 1; round <= 2; round++) {
  console.log(`round ${round}: chain before ${perEventMicros(before).toFixed(2)} µs/event, after ${perEventMicros(after).toFixed(2)} µs/event;`,
    `server thread's part: JSON.stringify(batch) ${perEventMicros(stringifyOnly).toFixed(2)}, encodeBatch ${perEventMicros(encodeOnly).toFixed(2)} µs/event`);
}
