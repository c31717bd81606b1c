// The archive DuckDB writes, through what can go wrong: a SIGKILL between a file and the
// checkpoint, a SIGKILL mid-compaction, a truncated file. After each, a reader (the event view)
// sees every acknowledged event exactly once at once, and the next delivery's sweep leaves the
// files themselves holding each once. Also: the files' columns are the JavaScript writer's, zstd.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetMetadata } from "hyparquet";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { EventView } from "../../src/store/columnar/event-view.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { archivePath } from "../../src/store/parquet/partitions.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { EVENT_SCHEMA } from "../../src/store/parquet/rows.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { StoredEvent } from "../../src/store/types.js";
import { deliverArchive as deliver, parquetRows } from "./parquet-files.js";

const CHILD = join(import.meta.dirname, "archive-crash-child.ts");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function event(i: number, projectId = "shop"): StoredEvent {
  const at = new Date(Date.parse("2026-11-20T10:00:00.000Z") + i * 1000).toISOString();
  const body = { type: "track", unitKey: `u${i}`, timestamp: at, orgId: "org-1", projectId, env: "production", event: "buy", value: i };
  return { id: `e-${i}`, receivedAt: at, orgId: "org-1", projectId, env: "production", type: "track", unitKey: `u${i}`, timestamp: at, name: "buy", ...(i % 5 === 0 && { discovered: true }), body };
}

/** A data folder whose store holds `batches` appends of `size` events. */
async function storeWith(batches: number, size: number): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "vane-archive-"));
  dirs.push(dataDir);
  const stores = openSqliteStores({ dataDir });
  for (let b = 0; b < batches; b++) await stores.events.append(Array.from({ length: size }, (_, i) => event(b * size + i + 1)));
  await stores.close();
  return dataDir;
}

/** Runs the copy's child until its SIGKILL at `point`. */
function killedAt(dataDir: string, point: string): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, dataDir, point], { stdio: ["ignore", "ignore", "inherit"] });
  return new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
}

/** The seqs a reader sees: count and distinct seqs through the event view. */
async function viewed(dataDir: string): Promise<{ count: number; seqs: number[] }> {
  const stores = openSqliteStores({ dataDir });
  const view = await EventView.open({ events: stores.events, parquetDir: join(dataDir, "parquet"), settings: { threads: 1 } });
  try {
    const seqs = (await view.list({ limit: 100_000 })).map((e) => e.seq).sort((a, b) => a - b);
    return { count: await view.count(), seqs };
  } finally {
    view.close();
    await stores.close();
  }
}

const upTo = (n: number) => Array.from({ length: n }, (_, k) => k + 1);
const rawSeqs = async (dataDir: string) => (await parquetRows(dataDir)).map((row) => Number(row.seq));
const files = (dataDir: string) => new NodeFileSink(join(dataDir, "parquet")).list();

describe("the archive DuckDB writes", () => {
  it("has the JavaScript writer's columns, zstd-compressed, the events as stored", async () => {
    const dataDir = await storeWith(1, 10);
    await deliver(dataDir);
    const [path] = await files(dataDir);
    const bytes = readFileSync(join(dataDir, "parquet", path!));
    const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    expect(metadata.schema.slice(1).map((c) => c.name)).toEqual(EVENT_SCHEMA.slice(1).map((c) => c.name));
    expect(metadata.row_groups[0]!.columns.map((c) => c.meta_data?.codec)).toEqual(EVENT_SCHEMA.filter((c) => c.type !== undefined).map(() => "ZSTD"));
    const received = metadata.schema.find((c) => c.name === "received_at");
    expect(received?.logical_type).toMatchObject({ type: "TIMESTAMP", isAdjustedToUTC: true });
    const rows = await parquetRows(dataDir);
    expect(rows.map((r) => [Number(r.seq), r.id, (r.received_at as Date).toISOString(), r.name, JSON.parse(r.body as string).value, r.discovered])).toEqual(
      upTo(10).map((i) => [i, `e-${i}`, event(i).receivedAt, "buy", i, i % 5 === 0 ? true : null]),
    );
  });

  it("a SIGKILL between a file and the checkpoint: readers see each event once at once, and the retry leaves the files so", async () => {
    const dataDir = await storeWith(3, 50);
    expect(await killedAt(dataDir, "after-file")).toBe("SIGKILL");
    expect(await files(dataDir)).toHaveLength(1); // written, not checkpointed
    expect(await viewed(dataDir)).toEqual({ count: 150, seqs: upTo(150) });
    // More events meanwhile: the retry's file holds a longer range under another name.
    const stores = openSqliteStores({ dataDir });
    await stores.events.append([event(151), event(152)]);
    await stores.close();
    await deliver(dataDir);
    expect((await rawSeqs(dataDir)).sort((a, b) => a - b)).toEqual(upTo(152));
    expect(await viewed(dataDir)).toEqual({ count: 152, seqs: upTo(152) });
  });

  it("a SIGKILL mid-compaction: the merged file beside its inputs is read once, and the next sweep deletes the inputs", async () => {
    const dataDir = await storeWith(12, 10);
    // Rounds of ten events: twelve small files in the partition's folder.
    const stores = openSqliteStores({ dataDir });
    const sink = new NodeFileSink(join(dataDir, "parquet"));
    const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
    const pipeline = new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, batchRows: 10, flushRows: 10 });
    await pipeline.catchUp();
    writer.close();
    await stores.close();
    expect(await files(dataDir)).toHaveLength(12);

    expect(await killedAt(dataDir, "mid-compaction")).toBe("SIGKILL");
    const left = (await files(dataDir)).map((p) => archivePath(p)!);
    expect(left).toHaveLength(13); // the merged file and its twelve inputs
    expect(left.some((f) => f.first === 1 && f.last === 120)).toBe(true);
    expect(await viewed(dataDir)).toEqual({ count: 120, seqs: upTo(120) });

    await deliver(dataDir);
    expect(await files(dataDir)).toHaveLength(1);
    expect((await rawSeqs(dataDir)).sort((a, b) => a - b)).toEqual(upTo(120));
  });

  it("a truncated file is found by the next delivery's sweep and written again from the store", async () => {
    const dataDir = await storeWith(1, 40);
    await deliver(dataDir);
    const [path] = await files(dataDir);
    const absolute = join(dataDir, "parquet", path!);
    truncateSync(absolute, Math.floor(statSync(absolute).size / 2));
    await expect(viewed(dataDir)).rejects.toThrow();
    await deliver(dataDir);
    expect(await viewed(dataDir)).toEqual({ count: 40, seqs: upTo(40) });
  });
});
