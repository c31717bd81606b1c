// Migration 10 on .vane folders the code before it wrote (test/fixtures/schema-9, made by commit
// 4d9ced8): the events only in the per-event table go back into the event log, the table goes,
// and every event is then read exactly once by `vane events`, `vane results` and the Parquet
// archive; seqs carry on past the highest the table ever gave, pruned or not.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DB_FILE_NAME, SCHEMA_VERSION, openSqliteStores } from "../../src/store/sqlite/index.js";
import { vane } from "../cli/helpers.js";
import { makeEvent } from "./fixtures.js";
import { deliverArchive, parquetRows } from "./parquet-files.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "schema-9");
/** The backlog fixture's events by seq (6 and 7 were pruned before the upgrade). */
const BACKLOG_SEQS = [1, 2, 3, 4, 5, 8, 9, 10, 11, 12];
const BACKLOG_IDS = ["ev-1", "ev-2", "ev-3", "ev-4", "ev-5", "ev-6", "ev-7", "ev-8", "ev-9", "ev-10"];

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function copyOf(fixture: string): string {
  const dir = mkdtempSync(join(tmpdir(), "vane-migration-"));
  dirs.push(dir);
  cpSync(join(FIXTURES, fixture), dir, { recursive: true });
  return dir;
}

function inFile<T>(dataDir: string, read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, DB_FILE_NAME), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

async function ok(...argv: string[]): Promise<string> {
  const run = await vane(...argv);
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  return run.out;
}

describe("migration 10: the per-event table into the event log", () => {
  it("writes the table's events back into the log once, drops the table, and keeps the discovered counts", async () => {
    const dir = copyOf("backlog");
    expect(inFile(dir, (db) => db.pragma("user_version", { simple: true }))).toBe(9);
    for (let open = 0; open < 2; open++) await openSqliteStores({ dataDir: dir }).close();
    inFile(dir, (db) => {
      expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'events'").all()).toEqual([]);
      expect(db.prepare("SELECT pipeline FROM checkpoints WHERE pipeline = 'events-table'").all()).toEqual([]);
      // 1-5 written back as one batch of consecutive seqs; 8-9 and 10-12 were in the log already.
      expect(db.prepare("SELECT seq, count FROM event_log ORDER BY seq").raw().all()).toEqual([[1, 5], [8, 2], [10, 3]]);
    });
    const stores = openSqliteStores({ dataDir: dir });
    try {
      const stored = await stores.events.readAfter(0, 100);
      expect(stored.map((e) => e.seq)).toEqual(BACKLOG_SEQS);
      expect(stored.map((e) => e.event.id)).toEqual(BACKLOG_IDS);
      // As the table gave it: the sender's id from the body, the discovered flag, the body.
      expect(stored[1]!.event).toMatchObject({ type: "track", name: "purchase", clientId: "c-ev-2", discovered: true, body: { value: 10 } });
      expect(stored[0]!.event.discovered).toBeUndefined();
      expect((await stores.events.discovered()).map((d) => [d.name, d.count])).toEqual([["purchase", 4]]);
      // The ids senders gave are still remembered: a resend is a duplicate.
      expect(await stores.events.append([{ ...stored[1]!.event, id: "ev-resent" }])).toMatchObject({ stored: 0, duplicates: 1 });
      expect((await stores.events.append([makeEvent("after")])).lastSeq).toBe(13);
    } finally {
      await stores.close();
    }
  });

  it("every event is then read once by vane events, vane results and the archive", async () => {
    const dir = copyOf("backlog");
    expect(await ok("events", "count", "--data", dir)).toBe("10");
    const listed = (await ok("events", "list", "--limit", "100", "--data", dir)).split("\n").map((line) => JSON.parse(line) as { seq: number });
    expect(listed.map((e) => e.seq).sort((a, b) => a - b)).toEqual(BACKLOG_SEQS);
    const results = JSON.parse(await ok("results", "pol-checkout", "--metric", "purchase", "--json", "--data", dir)) as {
      metrics: { allocations: { allocationKey: string; units: number; conversions: number }[] }[];
    };
    // control: u1 (bought), u3, u5; treatment: u2, u4, u6, all bought.
    expect(results.metrics[0]!.allocations.map((a) => [a.allocationKey, a.units, a.conversions])).toEqual([
      ["control", 3, 1],
      ["treatment", 3, 3],
    ]);
    await deliverArchive(dir);
    expect((await parquetRows(dir)).map((row) => [Number(row.seq), row.id])).toEqual(BACKLOG_SEQS.map((seq, i) => [seq, BACKLOG_IDS[i]]));
    expect(await ok("events", "count", "--data", dir)).toBe("10");
  });

  it("carries on past the highest seq the table gave, though retention had deleted those events", async () => {
    const dir = copyOf("pruned-top");
    const stores = openSqliteStores({ dataDir: dir });
    try {
      expect((await stores.events.readAfter(0, 10)).map((e) => e.seq)).toEqual([1, 2]);
      expect((await stores.events.append([makeEvent("next")])).lastSeq).toBe(6);
    } finally {
      await stores.close();
    }
  });
});
