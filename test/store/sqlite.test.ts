// The SQLite store: the contract, plus what only a file shared between processes can show.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  DB_FILE_NAME,
  MAX_GROUP_EVENTS,
  SCHEMA_VERSION,
  openSqliteStores,
  type SqliteStores,
} from "../../src/store/sqlite/index.js";
import { EventLog } from "../../src/store/sqlite/writer/event-log.js";
import { rowFacts } from "../../src/store/sqlite/writer/row-facts.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import { describeStoreContract } from "./contract.js";
import { SCHEMA_11_PENDING_TABLE, makeBatch, makeBundle, makeEvent, makeKey } from "./fixtures.js";
import { loggedEvents } from "./logged-events.js";

/** The per-event table migration 10 dropped, as migration 1 made it. */
const SCHEMA_9_EVENTS_TABLE = `CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, received_at TEXT NOT NULL, org_id TEXT NOT NULL,
  project_id TEXT NOT NULL, env TEXT NOT NULL, type TEXT NOT NULL, unit_key TEXT NOT NULL, timestamp TEXT NOT NULL,
  name TEXT, decision_id TEXT, discovered INTEGER, body TEXT NOT NULL)`;

const dirs: string[] = [];
const opened: SqliteStores[] = [];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-store-"));
  dirs.push(dir);
  return dir;
}

function open(dataDir: string, options: { busyTimeoutMs?: number } = {}): SqliteStores {
  const stores = openSqliteStores({ dataDir, ...options });
  opened.push(stores);
  return stores;
}

afterEach(() => {
  for (const stores of opened.splice(0)) stores.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describeStoreContract("sqlite", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-contract-"));
  const stores = openSqliteStores({ dataDir: dir });
  return {
    stores,
    async cleanup() {
      stores.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

// The server's shape: appends on the writer thread, read back from the log on the caller's connection.
describeStoreContract("sqlite, appends on a writer thread", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-contract-worker-"));
  const stores = openSqliteStores({ dataDir: dir, writer: "worker" });
  return {
    stores,
    async cleanup() {
      await stores.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe("sqlite store: the event log", () => {
  it("stores each event as written: absent and false fields, odd strings and numbers; another connection reads it back the same", async () => {
    const dir = tempDir();
    const stores = open(dir);
    const odd = { id: "client-odd", s: "é \u2028 \" \\ \n \u0001 😀 \ud800", n: [0.1, 1e21, -1.5e-7, 12.5, 0, 9007199254740993], nested: { a: [{}, [], null, true, false] }, "": "empty key", __proto__: { x: 1 } };
    const events = [
      makeEvent("odd", { body: odd, clientId: "client-odd" }),
      makeEvent("bare", { name: undefined, body: { type: "exposure" }, type: "exposure", decisionId: "dec-1" }),
      makeEvent("found", { discovered: true, name: "signup" }),
      makeEvent("known", { discovered: false }),
    ].map((event) => JSON.parse(JSON.stringify(event)) as typeof event); // undefined fields absent, as stored
    await stores.events.append(events);
    expect((await stores.events.readAfter(0, 10)).map((e) => e.event)).toEqual(events);
    expect((await loggedEvents(open(dir).events).list({ limit: 10 })).map((e) => e.event)).toEqual([...events].reverse());
  });

  it("reads at once a batch another connection appended (a writer that died right after): nothing to derive first", async () => {
    const dir = tempDir();
    const stores = open(dir);
    await stores.events.append(makeBatch("a", 3));
    const raw = new Database(path.join(dir, DB_FILE_NAME));
    try {
      raw.transaction(() => new EventLog(raw).append({ ...encodeLogRow(makeBatch("b", 2)), count: 2, facts: rowFacts(makeBatch("b", 2)) }))();
      expect((await stores.events.readAfter(0, 10)).map((e) => e.event.id)).toEqual([...makeBatch("a", 3), ...makeBatch("b", 2)].map((e) => e.id));
      expect(await loggedEvents(stores.events).count()).toBe(5);
    } finally {
      raw.close();
    }
  });
});

describe("sqlite store: retention of the log", () => {
  const OLD = "2026-01-01T00:00:00.000Z";
  const YOUNG = "2026-06-01T00:00:00.000Z";
  const rule = (derived: readonly string[]) => ({ eventsBeforeMs: Date.parse("2026-03-01T00:00:00.000Z"), idsBeforeMs: 0, derived });
  const ids = async (stores: SqliteStores) => (await stores.events.readAfter(0, 100)).map((e) => e.event.id);

  it("never deletes an event a copy's checkpoint has not passed nor one younger than the rule, and no event behind one kept", async () => {
    const stores = open(tempDir());
    await stores.events.append(makeBatch("a", 2, { receivedAt: OLD })); // 1-2
    await stores.events.append(makeBatch("b", 2, { receivedAt: OLD })); // 3-4
    await stores.events.append([makeEvent("c-0", { receivedAt: OLD }), makeEvent("c-1", { receivedAt: YOUNG })]); // 5-6
    await stores.events.append(makeBatch("d", 2, { receivedAt: OLD })); // 7-8
    await stores.events.setCheckpoint("parquet", 3); // mid-batch b
    await stores.events.setCheckpoint("learning", 8);
    expect(await stores.events.prune(rule(["parquet", "learning"]))).toEqual({ events: 3, eventIds: 0 });
    expect(await ids(stores)).toEqual(["evt-b-1", "evt-c-0", "evt-c-1", "evt-d-0", "evt-d-1"]);
    await stores.events.setCheckpoint("learning", 4);
    expect(await stores.events.prune(rule(["parquet", "learning"]))).toEqual({ events: 0, eventIds: 0 }); // parquet at 3
    await stores.events.setCheckpoint("parquet", 8);
    await stores.events.setCheckpoint("learning", 8);
    // b's last and c's old first event go; c's young one holds the boundary: d waits behind it, old as it is.
    expect(await stores.events.prune(rule(["parquet", "learning"]))).toEqual({ events: 2, eventIds: 0 });
    expect((await stores.events.readAfter(0, 10)).map((e) => [e.seq, e.event.id])).toEqual([[6, "evt-c-1"], [7, "evt-d-0"], [8, "evt-d-1"]]);
    expect(await stores.events.prune({ ...rule(["parquet", "learning"]), eventsBeforeMs: Date.parse("2027-01-01T00:00:00.000Z") })).toEqual({ events: 3, eventIds: 0 });
    expect(await loggedEvents(stores.events).count()).toBe(0);
  });

  it("continues seqs after a restart past the highest ever used, when retention deleted every batch", async () => {
    const dir = tempDir();
    const first = openSqliteStores({ dataDir: dir });
    await first.events.append(makeBatch("a", 3, { receivedAt: OLD }));
    await first.events.append(makeBatch("b", 4, { receivedAt: OLD }));
    expect(await first.events.prune(rule([]))).toEqual({ events: 7, eventIds: 0 });
    expect(await first.events.readAfter(0, 10)).toEqual([]);
    await first.close();
    const again = open(dir);
    expect((await again.events.append([makeEvent("c")])).lastSeq).toBe(8);
    expect((await again.events.readAfter(0, 10)).map((e) => e.seq)).toEqual([8]);
  });

  it("keeps a resent event's id for the dedup window after its batch is pruned: the resend is still a duplicate", async () => {
    const stores = open(tempDir());
    const sent = makeEvent("once", { receivedAt: OLD, clientId: "client-once", body: { type: "track", id: "client-once" } });
    await stores.events.append([sent]);
    await stores.events.prune(rule([]));
    expect(await loggedEvents(stores.events).count()).toBe(0);
    expect(await stores.events.append([{ ...sent, id: "evt-again" }])).toEqual({ lastSeq: 1, stored: 0, duplicates: 1 });
  });
});

describe("sqlite store: the file", () => {
  it("creates the data folder and vane.db in WAL mode at the current schema version", () => {
    const dataDir = path.join(tempDir(), "nested", "data");
    open(dataDir);
    const raw = new Database(path.join(dataDir, DB_FILE_NAME));
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(raw.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    } finally {
      raw.close();
    }
  });

  it("keeps keys, bundles, events, counts and checkpoints across close and reopen", async () => {
    const dir = tempDir();
    const first = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
    await first.keys.put(makeKey(1));
    await first.bundles.put(makeBundle("proj-1", "production", "v-9"), "2026-01-01T00:00:00.000Z");
    const batch = [makeEvent("a"), makeEvent("b", { name: "signup", discovered: true })];
    const { lastSeq } = await first.events.append(batch);
    await first.events.setCheckpoint("parquet", lastSeq);
    first.close();

    const again = open(dir);
    expect(await again.keys.byId(makeKey(1).id)).toStrictEqual(makeKey(1));
    expect(await again.bundles.version("proj-1", "production")).toBe("v-9");
    expect((await again.events.readAfter(0, 10)).map((entry) => [entry.seq, entry.event.id])).toEqual([
      [lastSeq - 1, "evt-a"],
      [lastSeq, "evt-b"],
    ]);
    expect((await again.events.discovered()).map((row) => [row.name, row.count])).toEqual([["signup", 1]]);
    expect(await again.events.checkpoint("parquet")).toBe(lastSeq);
    expect((await again.events.append([makeEvent("c")])).lastSeq).toBe(lastSeq + 1);
  });

  it("gives two connections appending in turn distinct seqs: a group's log end is read again after its transaction", async () => {
    const dir = tempDir();
    const server = open(dir);
    const cli = open(dir);
    const ends: number[] = [];
    for (let i = 0; i < 4; i++) {
      ends.push((await server.events.append(makeBatch(`s${i}`, 2))).lastSeq);
      ends.push((await cli.events.append(makeBatch(`c${i}`, 3))).lastSeq);
    }
    expect(ends).toEqual([2, 5, 7, 10, 12, 15, 17, 20]);
    const stored = await server.events.readAfter(0, 100);
    expect(stored.map((entry) => entry.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it("lets a second connection (the CLI) see writes at once, both ways", async () => {
    const dir = tempDir();
    const server = open(dir);
    const cli = open(dir);
    await server.events.append(makeBatch("s", 3));
    expect(await loggedEvents(cli.events).count()).toBe(3);
    await server.bundles.put(makeBundle("proj-1", "production", "v-1"), "2026-01-01T00:00:00.000Z");
    await cli.bundles.put(makeBundle("proj-1", "production", "v-2"), "2026-01-02T00:00:00.000Z");
    expect(await server.bundles.version("proj-1", "production")).toBe("v-2");
    await cli.keys.put(makeKey(7, { revokedAt: "2026-01-03T00:00:00.000Z" }));
    expect((await server.keys.byHash(makeKey(7).secretHash))?.revokedAt).toBe("2026-01-03T00:00:00.000Z");
  });

  it("reads, after an upgrade, the log rows a server of schema 7 left underived (their JSON of StoredEvent[])", async () => {
    const dir = tempDir();
    open(dir).close();
    const raw = new Database(path.join(dir, DB_FILE_NAME));
    const backlog = makeBatch("old", 3);
    try {
      // The file as schema 7 left it: no format column, one batch in the log and not in the table.
      raw.exec(SCHEMA_9_EVENTS_TABLE);
      raw.exec(SCHEMA_11_PENDING_TABLE);
      raw.exec("ALTER TABLE event_log DROP COLUMN format");
      raw.exec("ALTER TABLE bundle_history DROP COLUMN published_by");
      raw.pragma("user_version = 7");
      raw.prepare("INSERT INTO event_log (seq, count, received_at, events) VALUES (1, 3, ?, ?)").run(backlog[0]!.receivedAt, JSON.stringify(backlog));
    } finally {
      raw.close();
    }
    const upgraded = open(dir);
    expect((await upgraded.events.readAfter(0, 10)).map((e) => e.event)).toEqual(backlog);
    await upgraded.events.append(makeBatch("new", 2));
    expect(await loggedEvents(upgraded.events).count()).toBe(5);
  });

  it("keys the published open trials on an upgrade from schema 10, every bin kept (two alike added up)", async () => {
    const dir = tempDir();
    open(dir).close();
    const raw = new Database(path.join(dir, DB_FILE_NAME));
    const AT = 1_700_000_000_000;
    const bin = (armKey: string, atMs: number, count: number) => ({ projectId: "p", env: "production", policyId: "pol", armKey, windowMs: 60_000, atMs, count });
    try {
      raw.exec(SCHEMA_11_PENDING_TABLE);
      raw.exec(`DROP TABLE published_open_trials;
        CREATE TABLE published_open_trials (project_id TEXT NOT NULL, env TEXT NOT NULL, policy_id TEXT NOT NULL, arm_key TEXT NOT NULL,
          window_ms INTEGER NOT NULL, at_ms INTEGER NOT NULL, count INTEGER NOT NULL)`);
      const insert = raw.prepare("INSERT INTO published_open_trials VALUES ('p', 'production', 'pol', ?, 60000, ?, ?)");
      for (const [arm, at, count] of [["a", AT, 3], ["a", AT + 15, 1], ["b", AT, 4], ["a", AT, 2]] as const) insert.run(arm, at, count);
      raw.pragma("user_version = 10");
    } finally {
      raw.close();
    }
    const upgraded = open(dir);
    const sorted = async () => (await upgraded.learning.publishedOpenTrials()).sort((x, y) => x.armKey.localeCompare(y.armKey) || x.atMs - y.atMs);
    expect(await sorted()).toEqual([bin("a", AT, 5), bin("a", AT + 15, 1), bin("b", AT, 4)]);
    await upgraded.learning.publishOpenTrials({ upsert: [bin("a", AT, 7)], remove: [bin("b", AT, 4)], replace: false });
    expect(await sorted()).toEqual([bin("a", AT, 7), bin("a", AT + 15, 1)]);
  });

  it("fills each env's first publication on an upgrade from schema 13, the earliest time of its history and bundle; a later put keeps it", async () => {
    const dir = tempDir();
    open(dir).close();
    const raw = new Database(path.join(dir, DB_FILE_NAME));
    // As text "…T11:30:00+01:00" sorts after "…T10:45:00.000Z"; as a time it is 10:30Z, the earliest.
    const EARLIEST = "2026-11-29T11:30:00+01:00";
    try {
      raw.exec("DROP TABLE published_envs");
      const bundle = raw.prepare("INSERT INTO bundles (project_id, env, org_id, version, stored_at, bundle) VALUES (?, ?, 'org-1', ?, ?, ?)");
      const history = raw.prepare("INSERT INTO bundle_history (project_id, env, version, org_id, stored_at, bundle) VALUES ('shop', 'production', ?, 'org-1', ?, '{}')");
      bundle.run("shop", "production", "v3", "2026-11-29T12:00:00.000Z", JSON.stringify(makeBundle("shop", "production", "v3")));
      history.run("v1", "2026-11-29T10:45:00.000Z");
      history.run("v2", EARLIEST);
      history.run("v3", "2026-11-29T12:00:00.000Z");
      // Its history pruned away: the bundle's own time.
      bundle.run("shop", "staging", "v1", "2026-11-29T09:00:00.000Z", JSON.stringify(makeBundle("shop", "staging", "v1")));
      raw.pragma("user_version = 13");
    } finally {
      raw.close();
    }
    const upgraded = open(dir);
    const firsts = async () => (await upgraded.bundles.firstPublications()).map((first) => [first.env, first.storedAt]).sort();
    expect(await firsts()).toEqual([
      ["production", EARLIEST],
      ["staging", "2026-11-29T09:00:00.000Z"],
    ]);
    await upgraded.bundles.put(makeBundle("shop", "production", "v4"), "2026-11-30T00:00:00.000Z");
    await upgraded.bundles.put(makeBundle("shop", "preview", "v1"), "2026-11-30T00:00:01.000Z");
    expect(await firsts()).toEqual([
      ["preview", "2026-11-30T00:00:01.000Z"],
      ["production", EARLIEST],
      ["staging", "2026-11-29T09:00:00.000Z"],
    ]);
  });

  it("refuses a database written by a newer schema", () => {
    const dir = tempDir();
    open(dir).close();
    const raw = new Database(path.join(dir, DB_FILE_NAME));
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => openSqliteStores({ dataDir: dir })).toThrow(/newer than this build/);
  });

  it("refuses an unknown synchronous mode", () => {
    const synchronous = "OFF" as "FULL";
    expect(() => openSqliteStores({ dataDir: tempDir(), synchronous })).toThrow(RangeError);
  });

  it("opens a private in-memory database for :memory:", async () => {
    const stores = open(":memory:");
    await stores.keys.put(makeKey(2));
    expect(await stores.keys.byId(makeKey(2).id)).toStrictEqual(makeKey(2));
    expect(await open(":memory:").keys.byId(makeKey(2).id)).toBeUndefined();
  });
});

describe("sqlite store: group commit", () => {
  it("stores nothing of the failing batches of a group while the good ones commit", async () => {
    const stores = open(tempDir());
    await stores.events.append([makeEvent("old")]);
    const results = await Promise.allSettled([
      stores.events.append(makeBatch("good-1", 3)),
      stores.events.append([makeEvent("new-a", { name: "signup", discovered: true }), makeEvent("new-a")]),
      stores.events.append([makeEvent("new-b"), makeEvent("new-b")]),
      stores.events.append(makeBatch("good-2", 3)),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    const stored = await stores.events.readAfter(0, 100);
    expect(stored.map((entry) => entry.event.id)).toEqual([
      "evt-old",
      ...makeBatch("good-1", 3).map((event) => event.id),
      ...makeBatch("good-2", 3).map((event) => event.id),
    ]);
    // A rolled-back savepoint gives its seqs back: no gap between the good batches.
    expect(stored.map((entry) => entry.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await stores.events.discovered()).toEqual([]);
  });

  it("commits concurrent batches in call order, each in one run of seqs, across group caps", async () => {
    const stores = open(tempDir());
    const calls = Math.ceil((2 * MAX_GROUP_EVENTS) / 100) + 5;
    const receipts = await Promise.all(
      Array.from({ length: calls }, (_, i) => stores.events.append(makeBatch(`b${i}`, 100))),
    );
    expect(receipts.map((receipt) => receipt.lastSeq)).toEqual(Array.from({ length: calls }, (_, i) => 100 * (i + 1)));
    const stored = await stores.events.readAfter(0, 100 * calls);
    expect(stored[150]?.event.id).toBe("evt-b1-50");
    expect(stored[100 * calls - 1]?.event.id).toBe(`evt-b${calls - 1}-99`);
  });

  it("rejects every append of a group whose transaction cannot start, storing none", async () => {
    const dir = tempDir();
    const stores = open(dir, { busyTimeoutMs: 20 });
    const cli = new Database(path.join(dir, DB_FILE_NAME));
    cli.exec("BEGIN IMMEDIATE");
    try {
      const results = await Promise.allSettled([
        stores.events.append(makeBatch("x", 2)),
        stores.events.append(makeBatch("y", 2)),
      ]);
      expect(results.map((result) => result.status)).toEqual(["rejected", "rejected"]);
      const reason: unknown = results[0]?.status === "rejected" ? results[0].reason : undefined;
      expect(reason).toMatchObject({ code: "SQLITE_BUSY" });
    } finally {
      cli.exec("ROLLBACK");
      cli.close();
    }
    expect(await loggedEvents(stores.events).count()).toBe(0);
    expect((await stores.events.append(makeBatch("z", 2))).lastSeq).toBe(2);
  });

  it("commits appends still queued when closed", async () => {
    const dir = tempDir();
    const stores = openSqliteStores({ dataDir: dir });
    const pending = stores.events.append(makeBatch("late", 4));
    stores.close();
    expect(await pending).toEqual({ lastSeq: 4, stored: 4, duplicates: 0 });
    expect(await loggedEvents(open(dir).events).count()).toBe(4);
  });
});

describe("sqlite store: failures", () => {
  it("reports every store down after close, and rejects calls instead of throwing", async () => {
    const stores = open(tempDir());
    expect(await stores.health()).toEqual({ bundles: "ok", keys: "ok", events: "ok" });
    stores.close();
    expect(await stores.health()).toEqual({ bundles: "down", keys: "down", events: "down" });
    let call: Promise<unknown> | undefined;
    expect(() => {
      call = stores.keys.byId("key_x");
    }).not.toThrow();
    await expect(call).rejects.toThrow(/not open/);
    await expect(stores.events.append(makeBatch("closed", 1))).rejects.toThrow(/not open/);
    await expect(stores.events.append([])).rejects.toThrow(/not open/);
    await expect(stores.bundles.put(makeBundle("p", "e"), "2026-01-01T00:00:00.000Z")).rejects.toThrow();
  });

  it("reports one store down when its table is unusable", async () => {
    const dir = tempDir();
    const stores = open(dir);
    const raw = new Database(path.join(dir, DB_FILE_NAME));
    raw.exec("DROP TABLE keys");
    raw.close();
    expect(await stores.health()).toEqual({ bundles: "ok", keys: "down", events: "ok" });
    await expect(stores.keys.list()).rejects.toThrow(/no such table/);
  });
});

describe("writeAll (vane import)", () => {
  it("stores every key and bundle in one transaction", async () => {
    const stores = open(tempDir());
    await stores.writeAll({ keys: [makeKey(1), makeKey(2)], bundles: [makeBundle("p", "production")], storedAt: "2026-11-21T12:00:00.000Z" });
    expect((await stores.keys.list()).map((k) => k.id)).toEqual([makeKey(1).id, makeKey(2).id]);
    expect(await stores.bundles.version("p", "production")).toBe(makeBundle("p", "production").version);
  });

  it("a failure part way stores nothing: not the keys and bundles before it", async () => {
    const stores = open(tempDir());
    await stores.keys.put(makeKey(1));
    // Another id with key 1's secret hash: the unique hash refuses it, after key 2 and the bundle were written.
    const clash = { ...makeKey(3), secretHash: makeKey(1).secretHash };
    await expect(
      stores.writeAll({ keys: [makeKey(2), clash], bundles: [makeBundle("p", "production")], storedAt: "2026-11-21T12:00:00.000Z" }),
    ).rejects.toThrow(/UNIQUE/);
    expect((await stores.keys.list()).map((k) => k.id)).toEqual([makeKey(1).id]);
    expect(await stores.bundles.version("p", "production")).toBeUndefined();
  });
});
