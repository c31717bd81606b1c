// The Parquet copy's thread: it takes what this process's writer thread committed from memory, and
// it yields the core to requests (on Linux it runs at a lower priority, its own nice value, while
// the server's threads keep theirs).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { listArchive } from "../../src/store/columnar/archive-files.js";
import { ParquetThread } from "../../src/store/parquet/parquet-thread.js";
import { MIN_RUN_GAP_MS } from "../../src/store/parquet/parquet-protocol.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { parquetRows } from "./parquet-files.js";
import { makeBatch } from "./fixtures.js";
import { waitFor } from "../wait.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Each thread of this process with its nice value (/proc/self/task/<tid>/stat, field 19). */
function threadNices(): Map<number, number> {
  const nices = new Map<number, number>();
  for (const tid of fs.readdirSync("/proc/self/task")) {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    nices.set(Number(tid), Number(fields[16]));
  }
  return nices;
}

describe.skipIf(process.platform !== "linux")("ParquetThread (Linux only: per-thread nice values are read from /proc)", () => {
  it("runs 10 nice levels below the server while the process's other threads keep theirs", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-thread-"));
    dirs.push(dataDir);
    openSqliteStores({ dataDir }).close();
    const before = threadNices();
    const lowered = Math.min(19, before.get(process.pid)! + 10);
    const thread = new ParquetThread({ dataDir, intervalMs: 60_000, flushRows: 1_000 });
    try {
      const added = () => [...threadNices().keys()].filter((tid) => !before.has(tid));
      await waitFor(() => added().some((tid) => threadNices().get(tid) === lowered), "a new thread 10 nice levels below", { everyMs: 50 });
      const nices = threadNices();
      expect(added().map((tid) => nices.get(tid))).toContain(lowered);
      for (const [tid, nice] of before) if (nices.has(tid)) expect(nices.get(tid)).toBe(nice);
    } finally {
      await thread.close();
    }
  });
});

describe("ParquetThread fed by the writer thread", () => {
  it("copies this process's committed batches from memory, each event once, and the rest from the table", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-feed-"));
    dirs.push(dataDir);
    // Another process's batch, stored before this server started: only the table has it.
    const before = openSqliteStores({ dataDir });
    await before.events.append(makeBatch("before", 3));
    await before.close();
    const stores = openSqliteStores({ dataDir, writer: "worker" });
    const feed = stores.events.committedFeed?.();
    expect(feed).toBeDefined();
    const thread = new ParquetThread({ dataDir, intervalMs: 60_000, flushRows: 1_000 }, feed);
    const copiedThrough = (seq: number) =>
      waitFor(async () => {
        if ((await stores.events.checkpoint("parquet")) >= seq) return true;
        await thread.deliverThrough();
        return false;
      }, `the copy's checkpoint at ${seq}`);
    try {
      await copiedThrough(3); // the thread is up and has read the table's batch
      for (let b = 0; b < 5; b++) {
        await stores.events.append(makeBatch(`b${b}`, 20));
        await thread.deliverThrough();
      }
      await copiedThrough(103);
      const seqs = (await parquetRows(dataDir)).map((row) => Number(row.seq)).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: 103 }, (_, i) => i + 1));
      // Its report of the last run may still be on its way.
      await waitFor(() => thread.fromMemory >= 100, "the thread's report of its last run");
      expect(thread.fromMemory).toBe(100); // told to look after each answer, it finds every batch in memory
    } finally {
      await thread.close();
      await stores.close();
    }
  });
});

describe("ParquetThread between runs", () => {
  it("waits MIN_RUN_GAP_MS between runs, so what commits meanwhile goes into one delivery, each event once", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-gap-"));
    dirs.push(dataDir);
    const stores = openSqliteStores({ dataDir, writer: "worker" });
    const thread = new ParquetThread({ dataDir, intervalMs: 60_000, flushRows: 1_000 }, stores.events.committedFeed?.());
    const started = Date.now();
    try {
      // A batch every 50 ms for 1.5 s, the thread told to look after each, as the server tells it.
      for (let b = 0; b < 30; b++) {
        await stores.events.append(makeBatch(`g${b}`, 10));
        await thread.deliverThrough();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await thread.close();
      const elapsed = Date.now() - started;
      const seqs = (await parquetRows(dataDir)).map((row) => Number(row.seq)).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      // One file a delivery (one partition): a run at most every gap, and the close's last one.
      const files = (await listArchive(path.join(dataDir, "parquet"))).length;
      expect(files).toBeLessThanOrEqual(Math.floor(elapsed / MIN_RUN_GAP_MS) + 2);
    } finally {
      await thread.close();
      await stores.close();
    }
  });
});

describe("ParquetThread when its store will not open", () => {
  const refuses = (thread: ParquetThread) => thread.deliverThrough().then(() => false, () => true);

  it("reports the copy failing, stays up to retry, resumes once the store opens, and closes promptly", async () => {
    // The data folder sits under a regular file for now: opening the store fails (ENOTDIR), as a
    // table renamed by another connection while the thread starts did (issue 32).
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-unopened-"));
    dirs.push(root);
    const blocker = path.join(root, "blocker");
    fs.writeFileSync(blocker, "not a folder");
    const dataDir = path.join(blocker, "data");
    const thread = new ParquetThread({ dataDir, intervalMs: 50, flushRows: 1_000 });
    try {
      await waitFor(() => refuses(thread), "the copy to report its failure");
      expect(thread.stoppedOnItsOwn).toBe(false); // still there, retrying
      fs.rmSync(blocker);
      await waitFor(async () => !(await refuses(thread)), "the copy to recover once the store opens");
    } finally {
      await thread.close();
    }
  });

  it("close() ends a thread whose last delivery hangs, after its bound", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-hung-"));
    dirs.push(dataDir);
    openSqliteStores({ dataDir }).close();
    // Another connection holds the lock for the whole test: the thread's open waits on it.
    const db = new Database(path.join(dataDir, "vane.db"));
    db.exec("BEGIN EXCLUSIVE");
    const thread = new ParquetThread({ dataDir, intervalMs: 60_000, flushRows: 1_000 }, undefined, { closeMs: 300 });
    try {
      await thread.close(); // resolves with the lock still held: the bound ended the thread
      expect(thread.stoppedOnItsOwn).toBe(false);
    } finally {
      db.exec("ROLLBACK");
      db.close();
    }
  });
});
