import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NodeFileSink, fileSinkFor } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import type { Delivery } from "../../src/store/parquet/delivery.js";
import { EVERY_ENV, groupByPartition, partitionFile, partitionFolder } from "../../src/store/parquet/partitions.js";
import { encodeEvents } from "../../src/store/parquet/rows.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { FileSink } from "../../src/store/parquet/sink.js";
import type { EventStore, StoredEvent } from "../../src/store/types.js";
import { MemoryEventStore } from "./memory-events.js";

/** A sink in memory that logs writes, can fail chosen calls and can hold writes until released. */
class MemorySink implements FileSink {
  readonly files = new Map<string, Uint8Array>();
  readonly writes: string[] = [];
  inFlight = 0;
  maxInFlight = 0;
  failOn: (call: number) => Error | undefined = () => undefined;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private entered: (() => void) | undefined;

  /** Holds every write until release(); resolves `entered` once the first held write arrives. */
  hold(): Promise<void> {
    this.gate = new Promise((resolve) => (this.open = resolve));
    return new Promise((resolve) => (this.entered = resolve));
  }

  release(): void {
    this.gate = undefined;
    this.open?.();
  }

  async write(path: string, bytes: Uint8Array): Promise<void> {
    const call = this.writes.push(path);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      this.entered?.();
      await this.gate;
      const error = this.failOn(call);
      if (error) throw error;
      this.files.set(path, bytes.slice());
    } finally {
      this.inFlight--;
    }
  }

  async list(): Promise<string[]> {
    return [...this.files.keys()];
  }

  async remove(path: string): Promise<void> {
    this.files.delete(path);
  }
}

const BASE = "2025-03-09T10:15:00.000Z";

/** Event `i`, received `offsetMs` after BASE unless `receivedAt` is given. */
function event(i: number, fields: Partial<StoredEvent> & { offsetMs?: number } = {}): StoredEvent {
  const { offsetMs = i * 1000, ...rest } = fields;
  return {
    id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    receivedAt: new Date(Date.parse(BASE) + offsetMs).toISOString(),
    orgId: "org_1",
    projectId: i % 2 === 0 ? "proj_a" : "proj_b",
    env: "production",
    type: i % 3 === 0 ? "track" : "exposure",
    unitKey: `user-${i}`,
    timestamp: `2025-03-09T10:14:${String(i % 60).padStart(2, "0")}.5+01:00`,
    ...(i % 3 === 0 ? { name: `purchase ✓ ${i}` } : {}),
    ...(i % 4 === 0 ? { decisionId: `dec_${i}` } : {}),
    body: { type: "exposure", n: i, nested: { list: [1, "二", null] }, ...(i % 3 === 0 ? { value: i / 2 } : { layers: layersOf(i) }) },
    ...rest,
  };
}

/** An exposure's layers: one full assignment, and one with a propensity and flag of the wrong JSON types. */
function layersOf(i: number): Record<string, unknown>[] {
  return [
    { layerId: "l1", bucket: i, policyId: "pol_1", policyKey: "p1", allocationId: `alloc_${i % 2}`, allocationKey: `arm ${i % 2}`, probability: 0.25, attributionOnly: true },
    { layerId: "l2", bucket: 7, policyKey: 3, probability: "0.5", attributionOnly: "yes" },
  ];
}

/** The `layers` column of layersOf(i): text fields as text, the wrongly typed ones null, like DuckDB's writer. */
function layersColumn(i: number): Record<string, unknown>[] {
  return [
    { layerId: "l1", policyId: "pol_1", policyKey: "p1", allocationId: `alloc_${i % 2}`, allocationKey: `arm ${i % 2}`, probability: 0.25, attributionOnly: true },
    { layerId: "l2", policyId: null, policyKey: "3", allocationId: null, allocationKey: null, probability: null, attributionOnly: null },
  ];
}

/** The file of a partition of org_1's production events (odd seqs are proj_b's, even proj_a's). */
function file(project: string, first: number, last: number, day = "2025-03-09"): string {
  const seq = (n: number) => String(n).padStart(12, "0");
  return `events/org=org_1/project=${project}/env=production/day=${day}/part-${seq(first)}-${seq(last)}.parquet`;
}

/** The seq ranges files were written for, "first-last", in write order. */
const ranges = (paths: readonly string[]) => paths.map((path) => /part-(\d+)-(\d+)\.parquet$/.exec(path)!.slice(1).map(Number).join("-"));

function events(from: number, to: number): StoredEvent[] {
  return Array.from({ length: to - from + 1 }, (_, k) => event(from + k));
}

type Row = Record<string, unknown>;

async function decode(bytes: Uint8Array): Promise<Row[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return parquetReadObjects({ file });
}

/** Every row of every file, with the file it is in. */
async function allRows(files: ReadonlyMap<string, Uint8Array>): Promise<(Row & { file: string })[]> {
  const rows: (Row & { file: string })[] = [];
  for (const [file, bytes] of files) {
    // hyparquet reads a null list as undefined.
    for (const row of await decode(bytes)) rows.push({ ...row, layers: row.layers ?? null, file });
  }
  return rows.sort((a, b) => Number(a.seq) - Number(b.seq));
}

/** The row the files should hold for event `e` at `seq`. */
function expectedRow(seq: number, e: StoredEvent): Row {
  return {
    seq: BigInt(seq),
    id: e.id,
    received_at: new Date(e.receivedAt),
    org_id: e.orgId,
    project_id: e.projectId,
    env: e.env,
    type: e.type,
    unit_key: e.unitKey,
    event_timestamp: e.timestamp,
    name: e.name ?? null,
    decision_id: e.decisionId ?? null,
    body: JSON.stringify(e.body),
    discovered: e.discovered ?? null,
    // No eventTime in these bodies: the timestamp (an hour before arrival) is when it happened.
    event_time: new Date(Math.min(Date.parse(e.timestamp), Date.parse(e.receivedAt))),
    layers: e.type === "track" ? null : layersColumn(seq),
    value: e.type === "track" ? seq / 2 : null,
  };
}

/** Asserts the files hold seq 1..n exactly once each. */
async function expectExactlyOnce(files: ReadonlyMap<string, Uint8Array>, n: number): Promise<void> {
  const seqs = (await allRows(files)).map((row) => Number(row.seq));
  expect(seqs).toEqual(Array.from({ length: n }, (_, k) => k + 1));
}

describe("ParquetPipeline", () => {
  let store: MemoryEventStore;
  let sink: MemorySink;
  beforeEach(() => {
    store = new MemoryEventStore();
    sink = new MemorySink();
  });

  it("writes every event exactly once with every column, reading in pages", async () => {
    const stored = events(1, 23);
    const { lastSeq } = await store.append(stored);
    const pipeline = new ParquetPipeline({ events: store, sink, batchRows: 5 });
    await pipeline.deliverThrough(lastSeq);

    const rows = await allRows(sink.files);
    expect(rows.map(({ file: _, ...row }) => row)).toEqual(stored.map((e, k) => expectedRow(k + 1, e)));
    expect(rows.some((row) => row.name === null) && rows.some((row) => typeof row.name === "string")).toBe(true);
    expect(JSON.parse(String(rows[0]?.body))).toEqual(stored[0]?.body);
    expect(await store.checkpoint("parquet")).toBe(23);
    expect(sink.writes).toEqual([file("proj_b", 1, 23), file("proj_a", 2, 22)]);
  });

  it("declares the column types, received_at as UTC millis", async () => {
    await store.append(events(1, 3));
    await new ParquetPipeline({ events: store, sink }).catchUp();
    const [bytes] = sink.files.values();
    const schema = parquetMetadata(bytes!).schema;
    const byName = new Map(schema.map((element) => [element.name, element]));
    expect(schema.slice(1).map((element) => element.name)).toEqual([
      "seq", "id", "received_at", "org_id", "project_id", "env", "type", "unit_key",
      "event_timestamp", "name", "decision_id", "body", "discovered", "event_time",
      "layers", "list", "element", "layerId", "policyId", "policyKey", "allocationId", "allocationKey", "probability", "attributionOnly", "value",
    ]);
    expect(byName.get("seq")).toMatchObject({ type: "INT64", repetition_type: "REQUIRED" });
    for (const instant of ["received_at", "event_time"]) {
      expect(byName.get(instant)).toMatchObject({
        type: "INT64",
        converted_type: "TIMESTAMP_MILLIS",
        logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MILLIS" },
      });
    }
    expect(byName.get("name")).toMatchObject({ converted_type: "UTF8", repetition_type: "OPTIONAL" });
    expect(byName.get("body")).toMatchObject({ converted_type: "UTF8", repetition_type: "REQUIRED" });
  });

  it("partitions by org, project, env and UTC day of receipt, one file per partition named by its seq range", async () => {
    const at = (iso: string) => ({ offsetMs: Date.parse(iso) - Date.parse(BASE) });
    await store.append([
      event(1, at("2025-03-09T10:59:59.999Z")),
      event(2, at("2025-03-09T11:00:00.000Z")),
      event(3, at("2025-03-09T10:59:58.000Z")), // a late receipt, back in hour 10
      event(4, { receivedAt: "2025-03-09T23:30:00.000-02:00" }), // 01:30 UTC the next day
      event(5, { env: "staging eu/1" }), // escaped as Hive does
    ]);
    await new ParquetPipeline({ events: store, sink }).deliverThrough(5);

    expect([...sink.files.keys()].sort()).toEqual([
      file("proj_a", 2, 2),
      file("proj_a", 4, 4, "2025-03-10"),
      file("proj_b", 1, 3),
      "events/org=org_1/project=proj_b/env=staging%20eu%2F1/day=2025-03-09/part-000000000005-000000000005.parquet",
    ]);
    const rows = await allRows(sink.files);
    expect(rows.map((row) => [Number(row.seq), row.file.split("/")[4]])).toEqual([
      [1, "day=2025-03-09"], [2, "day=2025-03-09"], [3, "day=2025-03-09"], [4, "day=2025-03-10"], [5, "day=2025-03-09"],
    ]);
  });

  it("names a long value's folder by its start and a hash: every name within 255 bytes, one folder per value", () => {
    const day = Date.parse("2025-03-09T10:00:00Z");
    const names = (env: string) => partitionFolder({ orgId: "org_1", projectId: "p".repeat(400), env }, day, EVERY_ENV).split("/");
    const values = ["e".repeat(300), "e".repeat(301), "é".repeat(60), "é".repeat(61), `${"e".repeat(180)}${"é".repeat(5)}`] // the last: a character across the cut;
    const folders = values.map((env) => names(env));
    for (const parts of folders) for (const part of parts) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(255);
    expect(new Set(folders.map((parts) => parts[3])).size).toBe(values.length);
    for (const parts of folders) {
      expect(parts[3]).toMatch(/^env=(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+\.[0-9a-f]{16}$/);
      expect(() => decodeURIComponent(parts[3]!.slice("env=".length).split(".")[0]!)).not.toThrow(); // whole characters: Hive readers decode it
    }
    expect(names("staging eu/1")[3]).toBe("env=staging%20eu%2F1"); // a short value as before
  });

  it("rejects with the sink's error and keeps the checkpoint, then delivers backlog and new events once", async () => {
    const full = new Error("disk full");
    sink.failOn = (call) => (call === 2 || call === 3 ? full : undefined);
    const pipeline = new ParquetPipeline({ events: store, sink });
    await store.append([...events(1, 3), event(4, { offsetMs: 3_600_000 })]); // proj_b 1, 3; proj_a 2, 4

    await expect(pipeline.deliverThrough(4)).rejects.toBe(full); // proj_b's written, proj_a's failed
    expect(await store.checkpoint("parquet")).toBe(0);
    await store.append(events(5, 6));
    await expect(pipeline.deliverThrough(6)).rejects.toBe(full); // the first write fails
    expect(await store.checkpoint("parquet")).toBe(0);

    await store.append(events(7, 8));
    await pipeline.deliverThrough(8);
    expect(await store.checkpoint("parquet")).toBe(8);
    await expectExactlyOnce(sink.files, 8);
    expect(sink.files.size).toBe(2);
  });

  it("coalesces calls made during a run into one next run, never two at once", async () => {
    const pipeline = new ParquetPipeline({ events: store, sink });
    await store.append(events(1, 3));
    const entered = sink.hold();
    const first = pipeline.deliverThrough(3);
    await entered;
    const waiting: Promise<void>[] = [];
    for (let i = 4; i <= 8; i++) {
      const { lastSeq } = await store.append([event(i)]);
      waiting.push(pipeline.deliverThrough(lastSeq));
    }
    waiting.push(pipeline.catchUp());
    expect(sink.writes).toHaveLength(1);
    sink.release();

    await Promise.all([first, ...waiting]);
    expect(ranges(sink.writes)).toEqual(["1-3", "2-2", "4-8", "5-7"]);
    expect(sink.maxInFlight).toBe(1);
    await expectExactlyOnce(sink.files, 8);
    expect(await store.checkpoint("parquet")).toBe(8);
  });

  it("starts the queued run as the current one settles: a call made right then waits its turn", async () => {
    const pipeline = new ParquetPipeline({ events: store, sink });
    await store.append(events(1, 2));
    const entered = sink.hold();
    const first = pipeline.deliverThrough(2);
    await entered;
    await store.append(events(3, 6));
    const second = pipeline.deliverThrough(4);
    // Called from the first run's settlement, before any other microtask could start a run.
    const third = first.then(() => pipeline.deliverThrough(6));
    sink.release();

    await Promise.all([first, second, third]);
    expect(ranges(sink.writes)).toEqual(["1-1", "2-2", "3-5", "4-6"]);
    await expectExactlyOnce(sink.files, 6);
  });

  it("a failed run rejects its callers only; the queued run still delivers", async () => {
    const broken = new Error("broken pipe");
    sink.failOn = (call) => (call === 1 ? broken : undefined);
    const pipeline = new ParquetPipeline({ events: store, sink });
    await store.append(events(1, 2));
    const entered = sink.hold();
    const first = pipeline.deliverThrough(2);
    await entered;
    const { lastSeq } = await store.append(events(3, 4));
    const second = pipeline.deliverThrough(lastSeq);
    sink.release();

    await expect(first).rejects.toBe(broken);
    await second;
    await expectExactlyOnce(sink.files, 4);
  });

  it("catchUp with nothing new writes nothing and keeps the checkpoint", async () => {
    const pipeline = new ParquetPipeline({ events: store, sink });
    await pipeline.catchUp();
    expect(sink.writes).toEqual([]);
    expect(await store.checkpoint("parquet")).toBe(0);

    await store.append(events(1, 5));
    await pipeline.catchUp();
    expect(sink.writes).toHaveLength(2); // proj_a's and proj_b's
    await pipeline.catchUp();
    await pipeline.deliverThrough(5);
    expect(sink.writes).toHaveLength(2);
    expect(await store.checkpoint("parquet")).toBe(5);
  });

  it("a crash between the file write and the checkpoint leaves no duplicate rows after the retry", async () => {
    const crash = new Error("process died");
    let crashes = 1;
    const crashing: EventStore = Object.assign(Object.create(store) as MemoryEventStore, {
      setCheckpoint: async (pipeline: string, seq: number) => {
        if (crashes-- > 0) throw crash;
        return store.setCheckpoint(pipeline, seq);
      },
    });
    await store.append([...events(1, 4), event(5, { offsetMs: 3_600_000 })]);
    await expect(new ParquetPipeline({ events: crashing, sink }).deliverThrough(5)).rejects.toBe(crash);
    expect(sink.files.size).toBe(2);
    expect(await store.checkpoint("parquet")).toBe(0);

    // A new process: more events of both partitions arrived meanwhile. Its sweep deletes the files
    // written past the checkpoint; the retry writes their events again, with the new ones.
    await store.append([event(6), event(7, { offsetMs: 3_600_000 })]);
    await new ParquetPipeline({ events: crashing, sink }).deliverThrough(7);
    expect(ranges(sink.writes)).toEqual(["1-5", "2-4", "1-7", "2-6"]);
    expect([...sink.files.keys()].sort()).toEqual([file("proj_a", 2, 6), file("proj_b", 1, 7)]);
    await expectExactlyOnce(sink.files, 7);
    expect(await store.checkpoint("parquet")).toBe(7);
  });

  it("delivers at least through seq, in paged rounds of at most flushRows (+ one page)", async () => {
    await store.append(events(1, 25));
    const pipeline = new ParquetPipeline({ events: store, sink, batchRows: 4, flushRows: 10 });
    await pipeline.deliverThrough(5);
    expect(await store.checkpoint("parquet")).toBe(8); // two pages of 4 passed seq 5
    await pipeline.catchUp();
    expect(ranges(sink.writes)).toEqual([
      "1-7", "2-8", // 1..8
      "9-19", "10-20", // 9..20: three pages reach flushRows
      "21-25", "22-24", // 21..25: the short page ends the run
    ]);
    await expectExactlyOnce(sink.files, 25);
  });

  it("refuses a bad seq, bad options, and a store whose readAfter does not advance", async () => {
    const pipeline = new ParquetPipeline({ events: store, sink });
    await expect(pipeline.deliverThrough(Number.NaN)).rejects.toThrow(RangeError);
    await expect(pipeline.deliverThrough(-1)).rejects.toThrow(RangeError);
    expect(() => new ParquetPipeline({ events: store, sink, batchRows: 0 })).toThrow(RangeError);

    await store.append(events(1, 3));
    const stuck: EventStore = Object.assign(Object.create(store) as MemoryEventStore, {
      readAfter: () => store.readAfter(0, 2),
    });
    await expect(new ParquetPipeline({ events: stuck, sink, batchRows: 2 }).catchUp()).rejects.toThrow(/not after 2/);
  });
});

describe("ParquetPipeline reading the log's rows (SQLite's readLogAfter)", () => {
  /** A SQLite store holding one log row a batch, of these sizes. */
  async function logStore(sizes: number[]) {
    const dir = await mkdtemp(join(tmpdir(), "vane-parquet-rows-"));
    const stores = openSqliteStores({ dataDir: dir });
    let next = 1;
    for (const size of sizes) {
      await stores.events.append(events(next, next + size - 1));
      next += size;
    }
    return { store: stores.events, total: next - 1, close: async () => {
      await stores.close();
      await rm(dir, { recursive: true, force: true });
    } };
  }

  /** A writeDelivery that records each round's size and writes its files, failing out of memory past `failAbove` events. */
  function recordingRounds(failAbove = Number.POSITIVE_INFINITY) {
    const rounds: number[] = [];
    const recorded = new MemorySink();
    const writeDelivery = async (delivery: Delivery): Promise<void> => {
      rounds.push(delivery.size);
      if (delivery.size > failAbove) throw new Error("Out of Memory Error: failed to allocate data of size 4.0 MiB");
      for (const partition of groupByPartition(delivery.decoded(), EVERY_ENV)) await recorded.write(partitionFile(partition), encodeEvents(partition.rows));
    };
    return { rounds, recorded, writeDelivery };
  }

  it("ends a round at flushChars characters of row text (+ about one row), whatever its rows", async () => {
    const { store: memory, total, close } = await logStore([4, 4, 4, 4]);
    const { rounds, recorded, writeDelivery } = recordingRounds();
    try {
      await new ParquetPipeline({ events: memory, sink: recorded, writeDelivery, batchRows: 4, flushChars: 1 }).catchUp();
      expect(rounds).toEqual([4, 4, 4, 4]); // a batch's text reaches the bound; without it, one round of 16
      await expectExactlyOnce(recorded.files, total);
      expect(await memory.checkpoint("parquet")).toBe(total);
      expect(() => new ParquetPipeline({ events: memory, sink: recorded, flushChars: 0 })).toThrow(RangeError);
    } finally {
      await close();
    }
  });

  it("after a delivery that ran the writer out of memory, delivers half as many events at a time, each once", async () => {
    const { store: memory, total, close } = await logStore([4, 4, 4, 4]);
    const { rounds, recorded, writeDelivery } = recordingRounds(4);
    try {
      const pipeline = new ParquetPipeline({ events: memory, sink: recorded, writeDelivery, batchRows: 4, flushRows: 8 });
      await expect(pipeline.catchUp()).rejects.toThrow(/Out of Memory/);
      await pipeline.catchUp();
      expect(rounds).toEqual([8, 4, 4, 4, 4]);
      await expectExactlyOnce(recorded.files, total);
      expect(await memory.checkpoint("parquet")).toBe(total);
    } finally {
      await close();
    }
  });

});

describe("NodeFileSink", () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "vane-parquet-"));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  async function listFiles(folder: string): Promise<string[]> {
    const entries = await readdir(folder, { recursive: true, withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name).slice(folder.length + 1))
      .sort();
  }

  it("writes the pipeline's files under <dataDir>/parquet, readable by hyparquet", async () => {
    const store = new MemoryEventStore();
    const stored = [...events(1, 3), event(4, { offsetMs: 3_600_000 })];
    await store.append(stored);
    await new ParquetPipeline({ events: store, sink: fileSinkFor(dataDir) }).catchUp();

    const root = join(dataDir, "parquet");
    expect(await listFiles(root)).toEqual([file("proj_a", 2, 4), file("proj_b", 1, 3)]);
    const files = new Map<string, Uint8Array>();
    for (const path of await listFiles(root)) files.set(path, await readFile(join(root, path)));
    const rows = await allRows(files);
    expect(rows.map(({ file: _, ...row }) => row)).toEqual(stored.map((e, k) => expectedRow(k + 1, e)));
  });

  it("replaces a file whole and leaves no temporary file", async () => {
    const sink = new NodeFileSink(dataDir);
    await sink.write("a/b/c.parquet", new Uint8Array([1, 2, 3, 4]));
    await sink.write("a/b/c.parquet", new Uint8Array([9]));
    expect(await readFile(join(dataDir, "a/b/c.parquet"))).toEqual(Buffer.from([9]));
    expect(await listFiles(dataDir)).toEqual(["a/b/c.parquet"]);
  });

  it("refuses paths outside its folder, and cleans up after a failed write", async () => {
    const sink = new NodeFileSink(dataDir);
    for (const path of ["../x.parquet", "/etc/x", "a//b", "a/./b", "a\\b", ""]) {
      await expect(sink.write(path, new Uint8Array([1]))).rejects.toThrow(/not a relative sink path/);
    }
    await writeFile(join(dataDir, "taken"), "a file, not a folder");
    await expect(sink.write("taken/x.parquet", new Uint8Array([1]))).rejects.toThrow();
    await sink.write("dir/x.parquet", new Uint8Array([1]));
    await expect(sink.write("dir", new Uint8Array([2]))).rejects.toThrow(); // rename onto a folder
    expect(await listFiles(dataDir)).toEqual(["dir/x.parquet", "taken"]);
  });
});
