// The Parquet copy's child process: it yields the core to requests (every thread of it 10 nice
// levels below the server), copies what is stored, reports itself idle when its looks find nothing,
// and exits when closed.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { listArchive } from "../../src/store/columnar/archive-files.js";
import { COPY_ENV, COPY_V8_FLAGS, ParquetProcess, copyEnvironment } from "../../src/store/parquet/parquet-process.js";
import { MIN_RUN_GAP_MS } from "../../src/store/parquet/parquet-protocol.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { parquetRows } from "./parquet-files.js";
import { makeBatch } from "./fixtures.js";
import { alive, nice, threadNices } from "../copy-processes.js";
import { waitFor } from "../wait.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(process.platform !== "linux")("ParquetProcess (Linux: nice values and processes are read from /proc)", () => {
  it("runs every thread of the copy's process 10 nice levels below the server, whose own threads keep theirs", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-nice-"));
    dirs.push(dataDir);
    openSqliteStores({ dataDir }).close();
    const before = threadNices(process.pid);
    const lowered = Math.min(19, nice(process.pid) + 10);
    const copy = new ParquetProcess({ dataDir, intervalMs: 60_000, flushRows: 1_000 });
    try {
      // Its main thread at once (the fork's renice); the threads Node started before that once it runs (its own).
      await waitFor(() => threadNices(copy.pid!).every((n) => n === lowered) && threadNices(copy.pid!).length > 4, "every thread of the copy 10 nice levels below", { everyMs: 50 });
      expect(new Set(threadNices(process.pid))).toEqual(new Set(before));
    } finally {
      await copy.close();
    }
  });

  it("forks the copy with its own V8 flags and its allocators' settings in its environment, the server's own settings first", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-flags-"));
    dirs.push(dataDir);
    openSqliteStores({ dataDir }).close();
    const copy = new ParquetProcess({ dataDir, intervalMs: 60_000, flushRows: 1_000 });
    try {
      const argv = fs.readFileSync(`/proc/${copy.pid}/cmdline`, "utf8").split("\0");
      for (const flag of COPY_V8_FLAGS) expect(argv).toContain(flag);
      const environ = fs.readFileSync(`/proc/${copy.pid}/environ`, "utf8").split("\0");
      for (const [name, value] of Object.entries(COPY_ENV)) expect(environ).toContain(`${name}=${process.env[name] ?? value}`);
    } finally {
      await copy.close();
    }
    expect(copyEnvironment({ MALLOC_ARENA_MAX: "4" }).MALLOC_ARENA_MAX).toBe("4"); // an operator's setting wins
  });

  it("reports itself idle once its looks find nothing, and exits when closed", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-idle-"));
    dirs.push(dataDir);
    const stores = openSqliteStores({ dataDir });
    await stores.events.append(makeBatch("a", 5));
    const copy = new ParquetProcess({ dataDir, intervalMs: 50, flushRows: 1_000 });
    try {
      await copy.idle;
      expect(await stores.events.checkpoint("parquet")).toBe(5); // it copied, then found nothing more
      expect(alive(copy.pid!)).toBe(true);
      expect(await copy.close()).toBeUndefined(); // ended on its own: no halt
      expect(alive(copy.pid!)).toBe(false);
    } finally {
      await copy.close();
      await stores.close();
    }
  });
});

describe("the copy's V8 flags", () => {
  it("bound its young generation at 4 MiB (semi-spaces of 2 MiB), which V8 grows to 32 MiB by default under a churn that keeps survivors", () => {
    // The copy holds a delivery's rows across scavenges, as this ring does: V8 grows the new space to its maximum.
    const churn = `const v8 = require("node:v8");
      let most = 0;
      const ring = new Array(200000);
      for (let i = 0; i < 3000000; i++) {
        ring[i % ring.length] = { i, s: "row-" + i };
        if (i % 10000 === 0) most = Math.max(most, v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size);
      }
      console.log(most);`;
    const newSpace = (flags: readonly string[]) => Number(execFileSync(process.execPath, [...flags, "-e", churn], { encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" } }));
    expect(newSpace([])).toBeGreaterThan(8 * 1024 * 1024); // the churn does grow it
    expect(newSpace(COPY_V8_FLAGS)).toBeLessThanOrEqual(4 * 1024 * 1024);
  });
});

describe("ParquetProcess between runs", () => {
  it("waits MIN_RUN_GAP_MS between runs, so what commits meanwhile goes into one delivery, each event once", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-gap-"));
    dirs.push(dataDir);
    const stores = openSqliteStores({ dataDir, writer: "worker" });
    const copy = new ParquetProcess({ dataDir, intervalMs: 60_000, flushRows: 1_000 });
    const started = Date.now();
    try {
      // A batch every 50 ms for 1.5 s, the copy told to look after each, as the server tells it.
      for (let b = 0; b < 30; b++) {
        await stores.events.append(makeBatch(`g${b}`, 10));
        await copy.deliverThrough();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await copy.close();
      const elapsed = Date.now() - started;
      const seqs = (await parquetRows(dataDir)).map((row) => Number(row.seq)).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
      // One file a delivery (one partition): a run at most every gap, and the close's last one.
      const files = (await listArchive(path.join(dataDir, "parquet"))).length;
      expect(files).toBeLessThanOrEqual(Math.floor(elapsed / MIN_RUN_GAP_MS) + 2);
    } finally {
      await copy.close();
      await stores.close();
    }
  });
});

describe("ParquetProcess when its store will not open", () => {
  const refuses = (copy: ParquetProcess) => copy.deliverThrough().then(() => false, () => true);

  it("reports the copy failing, stays up to retry, resumes once the store opens, and closes promptly", async () => {
    // The data folder sits under a regular file for now: opening the store fails (ENOTDIR), as a
    // table renamed by another connection while the copy starts did (issue 32).
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-unopened-"));
    dirs.push(root);
    const blocker = path.join(root, "blocker");
    fs.writeFileSync(blocker, "not a folder");
    const dataDir = path.join(blocker, "data");
    const copy = new ParquetProcess({ dataDir, intervalMs: 50, flushRows: 1_000 });
    try {
      await waitFor(() => refuses(copy), "the copy to report its failure");
      expect(copy.stoppedOnItsOwn).toBe(false); // still there, retrying
      fs.rmSync(blocker);
      await waitFor(async () => !(await refuses(copy)), "the copy to recover once the store opens");
    } finally {
      await copy.close();
    }
  });

  it("close() ends a copy whose last delivery hangs, after its bound", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-hung-"));
    dirs.push(dataDir);
    openSqliteStores({ dataDir }).close();
    // Another connection holds the lock for the whole test: the copy's open waits on it.
    const db = new Database(path.join(dataDir, "vane.db"));
    db.exec("BEGIN EXCLUSIVE");
    const copy = new ParquetProcess({ dataDir, intervalMs: 60_000, flushRows: 1_000 }, { closeMs: 300, haltMs: 300 });
    try {
      await copy.close(); // resolves with the lock still held: the bounds ended the copy
      expect(copy.stoppedOnItsOwn).toBe(false);
    } finally {
      db.exec("ROLLBACK");
      db.close();
    }
  });
});
