// Reads of the embedded store decode the event log (sqlite/log-events.ts): they wait for nothing
// (what replaced the per-event table's deriver), page across batches and the seqs missing
// between them, and list newest first through the filters.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { DB_FILE_NAME, openSqliteStores, type SqliteStores } from "../../src/store/sqlite/index.js";
import { makeBatch, makeEvent } from "./fixtures.js";
import { loggedEvents } from "./logged-events.js";

const dirs: string[] = [];
const opened: SqliteStores[] = [];

afterEach(async () => {
  for (const stores of opened.splice(0)) await stores.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function open(dir: string, writer: "inline" | "worker" = "inline"): SqliteStores {
  const stores = openSqliteStores({ dataDir: dir, writer });
  opened.push(stores);
  return stores;
}

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-log-reads-"));
  dirs.push(dir);
  return dir;
}

describe("reads of the event log", () => {
  it("see an append the writer thread acknowledged at once, on the server's connection and another process's", async () => {
    const dir = tempDir();
    const server = open(dir, "worker");
    const cli = open(dir);
    for (let i = 0; i < 20; i++) {
      const { lastSeq } = await server.events.append(makeBatch(`w${i}`, 3));
      expect((await server.events.readAfter(lastSeq - 3, 10)).map((e) => e.event.id)).toEqual(makeBatch(`w${i}`, 3).map((e) => e.id));
      expect(await loggedEvents(cli.events).count()).toBe(lastSeq);
    }
  });

  it("page from any seq, mid-batch and across more batches than one query reads", async () => {
    const stores = open(tempDir());
    for (let b = 0; b < 100; b++) await stores.events.append(makeBatch(`b${b}`, 3)); // 300 events in 100 rows
    const all = await stores.events.readAfter(0, 1_000);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    for (const [after, limit] of [[0, 1], [1, 1], [2, 5], [100, 250], [299, 10], [300, 10]] as const) {
      expect(await stores.events.readAfter(after, limit)).toEqual(all.slice(after, after + limit));
    }
  });

  it("skip the seqs missing between batches (events retention deleted before the log was the only copy)", async () => {
    const dir = tempDir();
    const stores = open(dir);
    for (const tag of ["a", "b", "c"]) await stores.events.append(makeBatch(tag, 2));
    const raw = new Database(path.join(dir, DB_FILE_NAME));
    raw.prepare("DELETE FROM event_log WHERE seq = 3").run();
    raw.close();
    expect((await stores.events.readAfter(0, 10)).map((e) => e.seq)).toEqual([1, 2, 5, 6]);
    expect((await stores.events.readAfter(2, 1)).map((e) => e.seq)).toEqual([5]);
    expect((await stores.events.readAfter(3, 10)).map((e) => e.seq)).toEqual([5, 6]);
  });

  it("list newest first through the filters, across pages, and count and name the orgs the same way", async () => {
    const stores = open(tempDir());
    for (let b = 0; b < 80; b++) {
      await stores.events.append([makeEvent(`t${b}`), makeEvent(`x${b}`, { type: "exposure", orgId: b % 2 === 0 ? "org-1" : "org-2", projectId: "proj-2" })]);
    }
    const exposures = await loggedEvents(stores.events).list({ type: "exposure", limit: 100 });
    expect(exposures.map((e) => e.event.id)).toEqual(Array.from({ length: 80 }, (_, i) => `evt-x${79 - i}`));
    expect((await loggedEvents(stores.events).list({ orgId: "org-2", projectId: "proj-2", limit: 3 })).map((e) => e.seq)).toEqual([160, 156, 152]);
    expect(await loggedEvents(stores.events).count({ projectId: "proj-2", orgId: "org-1" })).toBe(40);
    expect(await loggedEvents(stores.events).count()).toBe(160);
    expect(await loggedEvents(stores.events).orgsWithEvents("proj-2")).toEqual(["org-1", "org-2"]);
    expect(await loggedEvents(stores.events).list({ limit: 0 })).toEqual([]);
  });
});
