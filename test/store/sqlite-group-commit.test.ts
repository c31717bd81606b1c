// GroupCommit on its own: which calls share a transaction, observed from a second connection.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GroupCommit } from "../../src/store/sqlite/group-commit.js";

let dir: string;
let db: Database.Database;
let observer: Database.Database;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-group-"));
  db = new Database(path.join(dir, "t.db"));
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (v TEXT NOT NULL UNIQUE)");
  observer = new Database(path.join(dir, "t.db"));
});

afterEach(() => {
  observer.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Inserts the values; answers how many rows another connection saw committed meanwhile. */
function inserter(maxGroupSize?: number): GroupCommit<string[], number> {
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  const committed = observer.prepare<[], number>("SELECT count(*) FROM t").pluck();
  return new GroupCommit(db, {
    apply: (values: string[]) => {
      for (const value of values) insert.run(value);
      return committed.get() ?? -1;
    },
    sizeOf: (values) => values.length,
    ...(maxGroupSize !== undefined && { maxGroupSize }),
  });
}

function rows(): string[] {
  return observer.prepare<[], string>("SELECT v FROM t ORDER BY rowid").pluck().all();
}

describe("GroupCommit", () => {
  it("runs calls of the same tick in one transaction and the next tick's in another", async () => {
    const group = inserter();
    const seen = await Promise.all([group.submit(["a"]), group.submit(["b"]), group.submit(["c"])]);
    // Nothing was committed while any of the three ran: they shared one transaction.
    expect(seen).toEqual([0, 0, 0]);
    expect(await group.submit(["d"])).toBe(3);
    expect(rows()).toEqual(["a", "b", "c", "d"]);
  });

  it("starts a new group where the size cap is reached, in call order", async () => {
    const group = inserter(3);
    const seen = await Promise.all([
      group.submit(["a", "b"]),
      group.submit(["c"]),
      group.submit(["d"]),
      group.submit(["e", "f", "g", "h"]),
      group.submit(["i"]),
    ]);
    // Groups: [a b c] (size 3), [d] (d + the next 4 would pass 3), [e f g h] alone (over the cap), [i].
    expect(seen).toEqual([0, 0, 3, 4, 8]);
    expect(rows()).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
  });

  it("rolls back a failing call alone and rejects only its promise", async () => {
    const group = inserter();
    const results = await Promise.allSettled([group.submit(["a"]), group.submit(["b", "a"]), group.submit(["c"])]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(rows()).toEqual(["a", "c"]);
  });

  it("rejects every call when a failure ends the whole transaction", async () => {
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const group = new GroupCommit(db, {
      apply: (value: string) => {
        insert.run(value);
        // Stands in for SQLITE_FULL or SQLITE_IOERR, which roll back the transaction themselves.
        if (value === "abort") db.exec("ROLLBACK");
        return value;
      },
    });
    const results = await Promise.allSettled([group.submit("a"), group.submit("abort"), group.submit("c")]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(rows()).toEqual([]);
    expect(db.inTransaction).toBe(false);
    expect(await group.submit("d")).toBe("d");
  });

  it("commits every queued call synchronously on flush, past the size cap", async () => {
    const group = inserter(2);
    const pending = [group.submit(["a", "b"]), group.submit(["c", "d"])];
    group.flush();
    expect(rows()).toEqual(["a", "b", "c", "d"]);
    expect(await Promise.all(pending)).toEqual([0, 2]);
  });
  it("runs a one-statement call without a savepoint of its own, and a failing one still fails alone", async () => {
    const statements: string[] = [];
    const traced = new Database(path.join(dir, "t.db"), { verbose: (sql) => statements.push(String(sql)) });
    try {
      const insert = traced.prepare("INSERT INTO t (v) VALUES (?)");
      const group = new GroupCommit(traced, {
        apply: (values: string[]) => values.map((value) => insert.run(value).changes).length,
        oneStatement: (values) => values.length === 1,
      });
      const results = await Promise.allSettled([group.submit(["a"]), group.submit(["b", "c"]), group.submit(["a"]), group.submit(["d"])]);
      expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
      expect(rows()).toEqual(["a", "b", "c", "d"]);
      // One savepoint: the two-statement call's; SQLite undid the failed INSERT of the repeated "a" by itself.
      expect(statements.filter((sql) => sql.startsWith("SAVEPOINT"))).toHaveLength(1);
    } finally {
      traced.close();
    }
  });
});

describe("group commit's lock wait", () => {
  it("is set on the connection when it changes, not for every group (a PRAGMA prepared each time)", async () => {
    const waits: number[] = [];
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const group = new GroupCommit(db, {
      apply: (value: string) => insert.run(value).changes,
      lockWaitMs: 5_000,
      waitAtMost: (ms) => waits.push(ms),
    });
    for (let i = 0; i < 20; i++) await group.submit(`v${i}`);
    // Once, unless a group started a whole step (100 ms) later than its call: then once more.
    expect(waits.length).toBeLessThan(4);
    expect(waits[0]).toBeLessThanOrEqual(4_900);
    expect(waits[0]).toBeGreaterThanOrEqual(4_800);
    // A call that has waited most of its time bounds the next wait by what it has left.
    await group.submit("late", Date.now() - 4_500);
    expect(waits.at(-1)).toBeLessThanOrEqual(500);
  });
});
