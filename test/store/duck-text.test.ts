// The Parquet copy handing DuckDB the log rows' text (duck-text.ts) writes the archive the appender
// path wrote: the same files, and in them the same rows, column for column, for every kind of
// event and body (escapes, unicode, numbers DuckDB prints otherwise, missing fields, times not in
// toISOString's form), from rows taken whole or from the middle.
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { LOG_FORMAT_COMPACT, LOG_FORMAT_EVENTS, encodeLogRow } from "../../src/store/log-row.js";
import { stageRawRows } from "../../src/store/parquet/duck-text.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { Delivery } from "../../src/store/parquet/delivery.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { EVERY_ENV } from "../../src/store/parquet/partitions.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { DB_FILE_NAME, openSqliteStores } from "../../src/store/sqlite/index.js";
import type { StoredEvent } from "../../src/store/types.js";

import { tempDirs } from "./fixtures.js";

const tempDir = tempDirs("vane-duck-text-");

type Extra = Record<string, unknown>;

/** An event whose body repeats its envelope, as the server stores them (a compact row). */
function event(id: string, receivedAt: string, type: StoredEvent["type"], extra: Extra = {}, discovered = false): StoredEvent {
  const body: Record<string, unknown> = { type, unitKey: `u-${id}`, timestamp: "2026-11-20T09:59:59.000Z", orgId: "org-1", projectId: "shop", env: "production", ...extra };
  const stored: { -readonly [K in keyof StoredEvent]: StoredEvent[K] } = {
    id,
    receivedAt,
    orgId: body.orgId as string,
    projectId: body.projectId as string,
    env: body.env as string,
    type,
    unitKey: body.unitKey as string,
    timestamp: body.timestamp as string,
    body,
  };
  if (type === "track" && body.event !== undefined) stored.name = body.event as string;
  if (body.decisionId !== undefined) stored.decisionId = body.decisionId as string;
  if (typeof body.id === "string") stored.clientId = body.id;
  if (discovered) stored.discovered = true;
  return stored;
}

const DAY_1 = "2026-11-20T10:00:00.000Z";
const DAY_2 = "2026-11-21T00:00:00.001Z";
const layers = [
  { layerId: "l1", policyId: "p", policyKey: "exp", allocationId: "p-a", allocationKey: "a", probability: 0.5, attributionOnly: false },
  { layerId: "l2", policyKey: 7, probability: "0.5", attributionOnly: "yes" },
];

/** Batches of every kind the log holds; the comment says what each one checks. */
function batches(): StoredEvent[][] {
  return [
    // Every event type, optional fields present and missing, a discovered name.
    [
      event("a1", DAY_1, "exposure", { eventTime: "2026-11-20T09:59:58.123Z", assignments: { f: "on" }, layers }),
      event("a2", DAY_1, "decision", { decisionId: "d-1", layers, context: { plan: "pro" } }),
      event("a3", DAY_1, "track", { event: "buy", value: 12.5, id: "client-1", decisionId: "d-1", eventTime: "2026-11-20T09:59:59.500Z" }),
      event("a4", DAY_1, "track", { event: "new-name", properties: {} }, true),
      event("a5", DAY_1, "track", { event: "no-value", value: "12" }),
      event("a6", DAY_1, "reward" as StoredEvent["type"], { decisionId: "d-1", reward: 1 }),
    ],
    // Strings with escapes and unicode DuckDB writes as JSON.stringify does.
    [
      event("b1", DAY_1, "track", { event: 'q"uote\\back/slash', value: 1, props: { s: "tab\tnew\nline\r\b\f", u: "é日本語😀\u2028\u2029\u007f", [`k"\\`]: [] } }),
      event("b2", DAY_1, "track", { event: "numbers", value: 0.1 + 0.2, n: [0, -0, 1e20, 12345678901234567890, -9007199254740993, 1e-7, 5e-324, 2 ** 53 + 2] }),
    ],
    // Text DuckDB would write otherwise: control characters' \u escapes, 1e+21.
    [event("c1", DAY_1, "track", { event: "ctl", s: "\u0001\u001f" })],
    [event("c3", DAY_1, "track", { event: "big", value: 1e21, n: 1.5e300 })],
    // Times not in toISOString's form: an offset, no eventTime, a sentAt-less timestamp years off, an unreadable one.
    [
      event("d1", DAY_1, "track", { event: "t", timestamp: "2026-11-20T11:59:59+02:00" }),
      event("d2", DAY_1, "track", { event: "t", timestamp: "2020-01-01T00:00:00.000Z" }),
      event("d3", DAY_1, "track", { event: "t", timestamp: "yesterday" }),
      event("d4", DAY_1, "track", { event: "t", eventTime: "2026-11-20T09:00:00Z" }),
      event("d5", DAY_1, "track", { event: "t", eventTime: 5 }),
    ],
    // Another day, org, project and env: other partitions, and a row of them interleaved.
    [event("e1", DAY_2, "track", { event: "buy", value: 3 }), event("e2", DAY_2, "exposure", { orgId: "org 2/ü", layers: [] }), event("e3", DAY_2, "track", { event: "buy", env: "staging", projectId: "p%2" })],
    // A row another producer wrote, whose envelope the body does not repeat (format 1).
    [{ ...event("f1", DAY_2, "track", { event: "buy" }), name: "renamed" }],
  ];
}

async function storeWithBatches(all: StoredEvent[][] = batches()): Promise<string> {
  const dataDir = tempDir();
  const stores = openSqliteStores({ dataDir });
  try {
    for (const batch of all) await stores.events.append(batch);
  } finally {
    await stores.close();
  }
  return dataDir;
}

/** Delivers the store into `folder`, by the appender path (decoded events) or from the rows' text. */
async function deliver(dataDir: string, folder: string, fromText: boolean, batchRows?: number): Promise<void> {
  const stores = openSqliteStores({ dataDir });
  const sink = new NodeFileSink(folder);
  const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
  try {
    await stores.events.setCheckpoint("parquet", 0); // each delivery writes the whole log
    const write = fromText ? { writeDelivery: writer.writeDelivery } : {};
    await new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, ...write, batchRows, flushRows: batchRows }).catchUp();
  } finally {
    writer.close();
    await stores.close();
  }
}

/** Each file's path and rows, every column, as text (so a NaN or -0 compares exactly). */
async function archive(folder: string): Promise<Map<string, string[]>> {
  const sink = new NodeFileSink(folder);
  const duck = await openDuck({ threads: 1 });
  const files = new Map<string, string[]>();
  try {
    for (const path of (await sink.list()).sort()) {
      const rows = (await duck.connection.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(sink.pathOf(path))}) ORDER BY seq`)).getRowObjectsJson();
      files.set(path, rows.map((row) => JSON.stringify(row)));
    }
  } finally {
    duck.close();
  }
  return files;
}

const duckApi = createRequire(import.meta.url)("@duckdb/node-api") as typeof import("@duckdb/node-api");

afterEach(() => {
  vi.restoreAllMocks();
});

/** The statements DuckDB starts (runHere's) from now on. */
function statementsStarted(): string[] {
  const started: string[] = [];
  const start = duckApi.DuckDBConnection.prototype.start;
  vi.spyOn(duckApi.DuckDBConnection.prototype, "start").mockImplementation(function (this: InstanceType<typeof duckApi.DuckDBConnection>, sql, ...rest) {
    started.push(sql);
    return start.call(this, sql, ...rest);
  });
  return started;
}

describe("the Parquet copy from the log rows' text", () => {
  it("writes the files the appender path wrote, row for row and column for column", async () => {
    const dataDir = await storeWithBatches();
    const stores = openSqliteStores({ dataDir });
    const formats = (await stores.events.readLogAfter!(0, 1_000)).map((row) => row.format);
    await stores.close();
    // The case for the text path is there: compact rows, and one of the other format.
    expect(formats.filter((f) => f === LOG_FORMAT_COMPACT).length).toBe(batches().length - 1);
    expect(formats).toContain(LOG_FORMAT_EVENTS);

    const [before, after] = [join(dataDir, "before"), join(dataDir, "after")];
    await deliver(dataDir, before, false);
    await deliver(dataDir, after, true);
    const [old, text] = [await archive(before), await archive(after)];
    expect([...text.keys()]).toEqual([...old.keys()]);
    expect(text.size).toBeGreaterThanOrEqual(4);
    for (const [path, rows] of old) expect(text.get(path), path).toEqual(rows);
    const all = [...text.values()].flat().map((row) => JSON.parse(row) as Record<string, unknown>);
    expect(all).toHaveLength(batches().flat().length);
    expect(all.find((row) => row.id === "b1")?.body).toBe(JSON.stringify(batches()[1]![0]!.body));
  });

  it("archives events holding lone surrogates, with U+FFFD in their place, and the events after them, by either path", async () => {
    const lone = [
      event("s1", DAY_1, "track", { event: "buy", value: 2, properties: { high: "x\ud800y", low: "\udc00", [`key\ud83d`]: true, pair: "😀", path: "C:\\udir" } }),
      event("s2", DAY_1, "exposure", { unitKey: "unit-\udbff", layers }),
    ];
    const after = [event("s3", DAY_1, "track", { event: "buy", value: 1 })];
    const dataDir = await storeWithBatches([lone, after]);
    for (const fromText of [false, true]) {
      const folder = join(dataDir, `from-text-${fromText}`);
      await deliver(dataDir, folder, fromText);
      const rows = [...(await archive(folder)).values()].flat().map((row) => JSON.parse(row) as Record<string, unknown>);
      expect(rows.map((row) => row.id).sort()).toEqual(["s1", "s2", "s3"]);
      const body = JSON.parse(rows.find((row) => row.id === "s1")!.body as string) as { properties: Record<string, unknown> };
      expect(body.properties).toEqual({ high: "x\ufffdy", low: "\ufffd", "key\ufffd": true, pair: "😀", path: "C:\\udir" });
      expect(rows.find((row) => row.id === "s1")!.value).toBe(2);
      expect(rows.find((row) => row.id === "s2")!.layers).not.toBeNull();
    }
  });

  it("takes rows from the middle, as a page that ended mid-row left them", async () => {
    const dataDir = await storeWithBatches();
    const [whole, paged] = [join(dataDir, "whole"), join(dataDir, "paged")];
    await deliver(dataDir, whole, true);
    await deliver(dataDir, paged, true, 4);
    const [a, b] = [await archive(whole), await archive(paged)];
    expect([...b.values()].flat().sort()).toEqual([...a.values()].flat().sort());
    expect(b.size).toBeGreaterThan(a.size);
  });

  it("writes a delivery of one partition straight from its text, the same files as the appender path", async () => {
    const dataDir = await storeWithBatches();
    // A row a delivery: most are one partition.
    const [appender, text] = [join(dataDir, "appender"), join(dataDir, "text")];
    await deliver(dataDir, appender, false, 1);
    const started = statementsStarted();
    await deliver(dataDir, text, true, 1);
    const [old, fromText] = [await archive(appender), await archive(text)];
    expect([...fromText.keys()]).toEqual([...old.keys()]);
    for (const [path, rows] of old) expect(fromText.get(path), path).toEqual(rows);
    const staged = started.filter((sql) => sql.startsWith("CREATE OR REPLACE TABLE delivered ")).length;
    const whole = started.filter((sql) => sql.includes("RETURN_STATS")).length;
    // a and b written by one COPY each from their text; d (times SQL cannot read) and e (three
    // partitions) tried so, then staged; c1, c3 and f (decoded in JavaScript) staged at once.
    expect(whole).toBe(4);
    expect(staged).toBe(2);
  });

  it("stages the delivery after one of several partitions at once, and tries the COPY from the text again after that", async () => {
    const one = (id: string) => [event(id, DAY_1, "track", { event: "buy", value: 1 })];
    const dataDir = await storeWithBatches([one("h1"), batches()[5]!, one("h2"), one("h3")]);
    const started = statementsStarted();
    await deliver(dataDir, join(dataDir, "text"), true, 1);
    const kinds = started.filter((sql) => sql.includes("RETURN_STATS") || sql.startsWith("CREATE OR REPLACE TABLE delivered ")).map((sql) => (sql.includes("RETURN_STATS") ? "text" : "staged"));
    // h1 from the text; the three partitions tried so, then staged; h2 staged at once; h3 from the text.
    expect(kinds).toEqual(["text", "text", "staged", "staged", "text"]);
    expect((await archive(join(dataDir, "text"))).size).toBe(6);
  });

  it("splits a delivery whose tenant ids differ only past their 100th character", async () => {
    const long = "p".repeat(100);
    const dataDir = await storeWithBatches([[event("g1", DAY_1, "track", { event: "buy", projectId: `${long}a` }), event("g2", DAY_1, "track", { event: "buy", projectId: `${long}b` })]]);
    const folder = join(dataDir, "text");
    await deliver(dataDir, folder, true);
    const files = await archive(folder);
    expect([...files.keys()].map((path) => path.split("/")[2]!.slice(-1))).toEqual(["a", "b"]);
    expect([...files.values()].flat()).toHaveLength(2);
  });

  it("encodes compact rows for the events above: the text path is what they take", () => {
    for (const batch of batches().slice(0, -1)) expect(encodeLogRow(batch).format).toBe(LOG_FORMAT_COMPACT);
  });
});

/** Each row a delivery of its own, straight to the writer; the files' rows in the order they are stored. */
async function deliverRows(batches: StoredEvent[][]): Promise<{ files: Map<string, Record<string, unknown>[]>; started: string[] }> {
  const folder = tempDir();
  const sink = new NodeFileSink(folder);
  const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
  const started = statementsStarted();
  let seq = 1;
  try {
    for (const batch of batches) {
      const { text, format } = encodeLogRow(batch);
      const delivery = new Delivery();
      delivery.addRow({ seq, count: batch.length, text, format, from: seq });
      seq += batch.length;
      await writer.writeDelivery(delivery, EVERY_ENV);
    }
  } finally {
    writer.close();
    vi.restoreAllMocks();
  }
  const duck = await openDuck({ threads: 1 });
  const files = new Map<string, Record<string, unknown>[]>();
  try {
    for (const path of (await sink.list()).sort()) {
      files.set(path, (await duck.connection.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(sink.pathOf(path))})`)).getRowObjectsJson());
    }
  } finally {
    duck.close();
  }
  return { files, started };
}

describe("the copy's work per event", () => {
  it("cuts each row into its events' text, and decodes in JavaScript a row it cannot cut exactly: the same files as the appender path", async () => {
    const all = [
      // `],["` outside a string, a body's own: the row is decoded in JavaScript.
      [event("n1", DAY_1, "track", { event: "grid", cells: [["a"], ["b"]] }), event("n2", DAY_1, "track", { event: "buy", value: 2 })],
      // The same characters inside a string are escaped (`],[\"`): the row is cut.
      [event("n3", DAY_1, "track", { event: "text", s: '],["x",{' }), event("n4", DAY_1, "exposure", { layers }, false)],
      // A body's `],["` that the events around it would pass for boundaries: one too many, decoded in JavaScript.
      [event("n9", DAY_1, "track", { event: "nest", cells: [[{ a: 1 }], ["b", { c: 2 }]] }), event("n10", DAY_1, "track", { event: "buy", value: 3 })],
      // An id with an escape: decoded in JavaScript.
      [event('n5"', DAY_1, "track", { event: "buy", value: 1 })],
      // Discovered events first, in the middle and last: cut.
      [event("n6", DAY_1, "track", { event: "new" }, true), event("n7", DAY_1, "track", { event: "old" }), event("n8", DAY_1, "track", { event: "new" }, true)],
    ];
    const appender = join(await storeWithBatches(all), "appender");
    await deliver(dirname(appender), appender, false);
    const { files, started } = await deliverRows(all);
    const old = [...(await archive(appender)).values()].flat().sort();
    expect([...files.values()].flat().map((row) => JSON.stringify(row)).sort()).toEqual(old);
    expect(old).toHaveLength(all.flat().length);
    // The rows of n1, n9 and n5, not cut, are decoded and staged; the other two are copied from their
    // text (n3's twice: unsorted, the first delivery's way, then sorted for its two types).
    const copies = started.filter((sql) => sql.startsWith("COPY")).map((sql) => (sql.includes("FROM delivered") ? "staged" : "text"));
    expect(copies).toEqual(["staged", "text", "text", "staged", "staged", "text"]);
  });

  it("reads the layers typed where every probability is a number and every attributionOnly a boolean, as JSON otherwise: the same files", async () => {
    const typed = [
      { layerId: "a", probability: 0.25, attributionOnly: true },
      { layerId: "b", probability: null, attributionOnly: null },
      {},
      { layerId: "c", probability: 1e-7, attributionOnly: false },
      { layerId: "d", probability: 12345678901234567890, policyKey: 7 },
      { layerId: "e", probability: -0.5 },
    ];
    const all = [
      [event("t1", DAY_1, "decision", { decisionId: "d-1", layers: typed })],
      [event("t2", DAY_1, "exposure", { layers: [1, "x", { layerId: "f", probability: 1 }] })],
      [event("j1", DAY_1, "exposure", { layers: [null, { layerId: "g", probability: 0.5 }] })],
      [event("j2", DAY_1, "exposure", { layers: [{ layerId: "h", probability: "0.5" }] })],
      [event("j3", DAY_1, "exposure", { layers: [{ layerId: "i", attributionOnly: 1 }] })],
      [event("j4", DAY_1, "decision", { layers: [{ layerId: "k", probability: true }] })],
    ];
    const dataDir = await storeWithBatches(all);
    const [appender, text] = [join(dataDir, "appender"), join(dataDir, "text")];
    await deliver(dataDir, appender, false);
    const started = statementsStarted();
    await deliver(dataDir, text, true, 1);
    const [old, fromText] = [await archive(appender), await archive(text)];
    expect([...fromText.values()].flat().sort()).toEqual([...old.values()].flat().sort());
    const copies = started.filter((sql) => sql.includes("RETURN_STATS"));
    expect(copies).toHaveLength(all.length);
    expect(copies.map((sql) => sql.includes('"probability":"DOUBLE"'))).toEqual([true, true, false, false, false, false]);
  });

  it("copies a delivery unsorted after a file of one type and name, and sorts one that holds more: every file in the archive's order", async () => {
    const decisions = (from: number) => [0, 1, 2].map((i) => event(`d${from + i}`, DAY_1, "decision", { decisionId: `d-${from + i}`, layers }));
    const mixed = (from: number) => [event(`m${from}`, DAY_1, "track", { event: "buy" }), event(`m${from + 1}`, DAY_1, "exposure", { layers }), event(`m${from + 2}`, DAY_1, "track", { event: "add" })];
    const { files, started } = await deliverRows([decisions(1), decisions(4), mixed(7), mixed(10), decisions(13)]);
    const order = (rows: Record<string, unknown>[]) =>
      [...rows].sort((a, b) => String(a.type).localeCompare(String(b.type)) || String(a.name ?? "").localeCompare(String(b.name ?? "")) || Number(a.seq) - Number(b.seq));
    expect(files.size).toBe(5);
    for (const [path, rows] of files) expect(rows, path).toEqual(order(rows));
    expect([...files.values()][2]!.map((row) => row.type)).toEqual(["exposure", "track", "track"]);
    const copies = started.filter((sql) => sql.startsWith("COPY")).map((sql) => (sql.includes("ORDER BY") ? "sorted" : "unsorted"));
    // The first mixed delivery is copied again, sorted; the next is sorted at once, and so is the
    // first of decisions after it (which shows the one after may go unsorted again).
    expect(copies).toEqual(["unsorted", "unsorted", "unsorted", "sorted", "sorted", "sorted"]);
  });
});

/** What the copy hands DuckDB as bytes (the appender's appendBlob) from now on, decoded: each event's `<id>",{…}`. */
function appendedAsBytes(): string[] {
  const values: string[] = [];
  const appendBlob = duckApi.DuckDBAppender.prototype.appendBlob;
  vi.spyOn(duckApi.DuckDBAppender.prototype, "appendBlob").mockImplementation(function (this: InstanceType<typeof duckApi.DuckDBAppender>, value) {
    values.push(Buffer.from(value).toString("utf8"));
    return appendBlob.call(this, value);
  });
  return values;
}

/** Rows of non-ASCII text for the bytes path, and rows it leaves to JavaScript; the comment says what each one checks. */
function nonAsciiBatches(): StoredEvent[][] {
  return [
    // Non-ASCII in ids, in bodies' strings and keys, in a tenant id: cut on their bytes.
    [event("é-1", DAY_1, "track", { event: "日本", value: 1, s: "é日本語😀", ключ: "ü" }), event("😀-2", DAY_1, "exposure", { layers, note: "ß" })],
    [event("o1", DAY_1, "track", { event: "buy", orgId: "org-é", value: 2 })],
    // A receivedAt not in toISOString's form, non-ASCII: Date.parse reads it from its own characters
    // (its bytes a character each, the no-break space is two, and it reads NaN).
    [event("r1", "20\u00a0Nov 2026 10:00:00 GMT", "track", { event: "buy", value: 3, s: "日本" })],
    // Bytes that are not UTF-8 (set by notUtf8; no Vane writes them): decoded in JavaScript, as a string read from SQLite has them.
    [event("x1", DAY_1, "track", { event: "bad", s: "BAD" })],
  ];
}

/** Replaces "BAD" in the row holding `seq` by bytes no UTF-8 decoder takes (a lone continuation byte, an overlong form). */
function notUtf8(dataDir: string, seq: number): void {
  const raw = new Database(join(dataDir, DB_FILE_NAME));
  try {
    const bytes = raw.prepare("SELECT CAST(events AS BLOB) FROM event_log WHERE seq = ?").pluck().get(seq) as Buffer;
    const at = bytes.indexOf("BAD");
    raw.prepare("UPDATE event_log SET events = CAST(? AS TEXT) WHERE seq = ?").run(Buffer.concat([bytes.subarray(0, at), Buffer.from([0x80, 0xc0, 0xaf]), bytes.subarray(at + 3)]), seq);
  } finally {
    raw.close();
  }
}

describe("the copy from the log rows' bytes", () => {
  it("hands DuckDB the bytes SQLite holds, non-ASCII text too, and decodes in JavaScript a row that is not UTF-8: the same files as the appender path", async () => {
    const all = nonAsciiBatches();
    const dataDir = await storeWithBatches(all);
    notUtf8(dataDir, 5);
    const stores = openSqliteStores({ dataDir });
    const rows = await stores.events.readLogAfter!(0, 100);
    await stores.close();
    expect(rows.map((row) => "bytes" in row && Buffer.isBuffer(row.bytes))).toEqual([true, true, true, true]);

    const [appender, bytes] = [join(dataDir, "appender"), join(dataDir, "bytes")];
    await deliver(dataDir, appender, false, 1);
    const appended = appendedAsBytes();
    await deliver(dataDir, bytes, true, 1);
    const [old, fromBytes] = [await archive(appender), await archive(bytes)];
    expect([...fromBytes.keys()]).toEqual([...old.keys()]);
    for (const [path, rows] of old) expect(fromBytes.get(path), path).toEqual(rows);
    expect(appended.map((event) => event.slice(0, event.indexOf('"')))).toEqual(["é-1", "😀-2", "o1", "r1"]);
    expect(appended[0]).toBe(`é-1",${JSON.stringify(all[0]![0]!.body)}`);
    const x1 = [...fromBytes.values()].flat().map((row) => JSON.parse(row) as Record<string, unknown>).find((row) => row.id === "x1");
    expect(x1?.body).toBe(JSON.stringify({ ...all[3]![0]!.body, s: "\ufffd\ufffd\ufffd" }));

    // The same rows given as text (a store that gives strings) are written alike.
    const { files } = await deliverRows(all.slice(0, 3));
    const fromText = [...files.values()].flat().map((row) => JSON.stringify(row)).sort();
    expect(fromText).toEqual([...old.values()].flat().filter((row) => !row.includes('"x1"')).sort());
  });

  it("stages each event's id and body from its row's bytes, and leaves to JavaScript a row with a lone surrogate (escaped by JSON) or bytes that are not UTF-8", async () => {
    const all = [...nonAsciiBatches(), [event("u1", DAY_1, "track", { event: "lone", s: "a\ud800b日本" })]];
    const dataDir = await storeWithBatches(all);
    notUtf8(dataDir, 5);
    const stores = openSqliteStores({ dataDir });
    const rows = await stores.events.readLogAfter!(0, 100);
    await stores.close();
    const duck = await openDuck({ threads: 1 });
    try {
      const raw = await stageRawRows(duck.connection, rows, []);
      expect(raw.decoded.map(({ event }) => event.id)).toEqual(["x1", "u1"]);
      expect(raw.texts).toBe(4);
      const staged = (await duck.connection.runAndReadAll("SELECT seq, decode(event[1:id_bytes]), decode(event[id_bytes + 3:]), discovered FROM log_events ORDER BY seq")).getRows();
      const expected = all.flat().slice(0, 4).map((e, i) => [BigInt(i + 1), e.id, JSON.stringify(e.body), null]);
      expect(staged).toEqual(expected);
    } finally {
      duck.close();
    }
  });
});
