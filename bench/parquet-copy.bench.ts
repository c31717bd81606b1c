// The Parquet copy alone: CPU per event of its DuckDB writer (src/store/parquet/duck-writer.ts)
// delivering log rows as the writer thread feeds them (100-event compact rows of bench:http's
// event mix, grouped 1–4 rows a group commit), for each delivery size, then the compaction of the
// files those deliveries left (none when they are at their final size: duck-writer.ts
// SMALL_FILE_BYTES). CPU is the process's (every thread: DuckDB's statements run on the
// calling thread or libuv's pool), so the figure holds still on a loaded machine; wall time does not.
//
//   node --import tsx bench/parquet-copy.bench.ts [-- --sizes 100,1000,10000 --events 200000]
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type LogRowFrom, encodeLogRow } from "../src/store/log-row.js";
import { Delivery } from "../src/store/parquet/delivery.js";
import { DuckArchiveWriter, writerSettings } from "../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../src/store/parquet/file-sink.js";
import { EVERY_ENV } from "../src/store/parquet/partitions.js";
import type { StoredEvent } from "../src/store/types.js";
import { EVENTS_PER_BATCH, eventBatchPool } from "./scenarios/http.js";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "100,400,1000,2500,5000,10000" }, // past 10,000 (the flush bound) a delivery needs more than the writer's 64 MiB
    events: { type: "string", default: "100000" },
  },
});
const SIZES = values.sizes.split(",").map(Number);
const EVENTS = Number(values.events);

/** One log row per request batch, as the server stores bench:http's events (event-batch.ts sets the tenant fields and eventTime). */
function logRows(count: number): LogRowFrom[] {
  const rows: LogRowFrom[] = [];
  let seq = 1;
  const receivedAt = new Date().toISOString();
  let pool: Record<string, unknown>[][] = [];
  for (let i = 0; i < count; i++) {
    // Every batch drawn anew (the pool's 64 repeat, which zstd would find and make look cheap).
    if (pool.length === 0) pool = eventBatchPool().map((text) => (JSON.parse(text) as { events: Record<string, unknown>[] }).events);
    const events: StoredEvent[] = pool.pop()!.map((sent) => {
      const body = { ...sent, orgId: "org-bench", projectId: "shop", env: "production", eventTime: sent.timestamp };
      const name = sent.type === "track" ? (sent.event as string) : undefined;
      return {
        id: randomUUID(),
        receivedAt,
        orgId: "org-bench",
        projectId: "shop",
        env: "production",
        type: sent.type as StoredEvent["type"],
        unitKey: sent.unitKey as string,
        timestamp: sent.timestamp as string,
        ...(name !== undefined && { name }),
        ...(sent.decisionId !== undefined && { decisionId: sent.decisionId as string }),
        ...(name === "add_to_cart" && { discovered: true }),
        body,
      };
    });
    const { text, format } = encodeLogRow(events);
    rows.push({ seq, count: events.length, text, format, from: seq });
    seq += events.length;
  }
  return rows;
}

const cpuUs = (): number => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

interface Row {
  size: number;
  deliveries: number;
  cpuPerEvent: number;
  cpuPerDelivery: number;
  wallPerEvent: number;
  files: number;
  compactCpuPerEvent: number;
  filesAfter: number;
}

async function measure(size: number, rows: readonly LogRowFrom[]): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), "vane-copy-bench-"));
  const sink = new NodeFileSink(join(dir, "parquet"));
  const writer = await DuckArchiveWriter.open(sink, writerSettings(dir));
  try {
    const perDelivery = Math.max(1, Math.round(size / EVENTS_PER_BATCH));
    // One warm-up delivery, not counted.
    const warm = new Delivery();
    for (const row of rows.slice(0, perDelivery)) warm.addRow(row);
    await writer.writeDelivery(warm, EVERY_ENV);
    await sink.remove((await sink.list())[0]!);
    let deliveries = 0;
    const cpu0 = cpuUs();
    const wall0 = performance.now();
    for (let at = 0; at < rows.length; at += perDelivery) {
      const delivery = new Delivery();
      for (const row of rows.slice(at, at + perDelivery)) delivery.addRow(row);
      await writer.writeDelivery(delivery, EVERY_ENV);
      deliveries += 1;
    }
    const cpu = cpuUs() - cpu0;
    const wall = (performance.now() - wall0) * 1000;
    const events = rows.length * EVENTS_PER_BATCH;
    const files = (await sink.list()).length;
    const compact0 = cpuUs();
    await writer.compact(Number.MAX_SAFE_INTEGER);
    const compactCpu = cpuUs() - compact0;
    const filesAfter = (await sink.list()).length;
    return { size: perDelivery * EVENTS_PER_BATCH, deliveries, cpuPerEvent: cpu / events, cpuPerDelivery: cpu / deliveries, wallPerEvent: wall / events, files, compactCpuPerEvent: compactCpu / events, filesAfter };
  } finally {
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = logRows(Math.ceil(EVENTS / EVENTS_PER_BATCH));
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}; ${rows.length * EVENTS_PER_BATCH} events, ${Math.round(rows.reduce((n, r) => n + r.text.length, 0) / rows.length / EVENTS_PER_BATCH)} chars an event`);
console.log("| events a delivery | deliveries | CPU µs an event | CPU ms a delivery | wall µs an event | files | compaction CPU µs an event | files after it |");
console.log("|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const size of SIZES) {
  const r = await measure(size, rows);
  console.log(`| ${r.size} | ${r.deliveries} | ${r.cpuPerEvent.toFixed(2)} | ${(r.cpuPerDelivery / 1000).toFixed(1)} | ${r.wallPerEvent.toFixed(2)} | ${r.files} | ${r.compactCpuPerEvent.toFixed(2)} | ${r.filesAfter} |`);
}
