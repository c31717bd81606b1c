// A stop while the Parquet copy's thread is inside a DuckDB statement: the process used to abort
// ("terminate called after throwing an instance of 'Napi::Error'", SIGABRT) when it exited, or
// terminated the thread, past the stop's deadline with DuckDB still running a statement there. A
// stop that cannot wait halts the copy instead: the statement ends at its next task, DuckDB is
// closed on its own thread, the thread ends, and only then does the process exit. Every stored
// event is still copied, by the next start. A halt that stops waiting never terminates the thread
// while a DuckDB call is in flight there: the call's promise, settled while Node tore the thread
// down, threw Napi::Error out of the binding's callback (AsyncWorker::OnAsyncWorkComplete).
import { spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { makeBatch, tempDirs } from "../store/fixtures.js";
import { parquetRows } from "../store/parquet-files.js";

const tempDir = tempDirs("vane-stop-mid-copy-");
const BACKLOG_BATCHES = 40;
const PER_BATCH = 1_000;
/**
 * Stops at many moments of the copy's catch-up (ms after the start), each with a deadline short
 * enough that the stop gives up while the copy's last delivery runs. Before the fix about one stop
 * in seven aborted (3 of 20 at these moments and deadlines), so 24 stops all but always hit it.
 */
const STOPS = Array.from({ length: 24 }, (_, i) => ({ afterMs: 600 + 50 * i, deadlineMs: i % 2 === 0 ? 60 : 150 }));

/**
 * Halts of the copy's own thread with 1 ms of grace, in ms after its start (it starts copying
 * ~2 s after, under tsx): each terminates the thread at once unless a DuckDB call is in flight
 * there. With the halt blind to such calls, 2 halts of 23 across the copy aborted; with the
 * thread loading DuckDB's addon as it imported its modules (uncounted), 2 runs of 3 under a CPU
 * hog aborted in the addon's init, at 2,000 and 2,250 ms.
 */
const HALTS = Array.from({ length: 12 }, (_, i) => 2_000 + 250 * i);

/** Runs `child` (a script beside this file) with `args` under tsx: its exit, its stdout and its stderr. */
function runChild(child: string, args: readonly (string | number)[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const spawned = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, child), ...args.map(String)]);
  let [stdout, stderr] = ["", ""];
  spawned.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  spawned.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => spawned.on("exit", (code, signal) => done({ code, signal, stdout, stderr })));
}

/** A data folder whose event log holds the backlog, the copy's checkpoint at 0. */
async function seeded(): Promise<string> {
  const dataDir = tempDir();
  const stores = openSqliteStores({ dataDir });
  for (let b = 0; b < BACKLOG_BATCHES; b++) await stores.events.append(makeBatch(`b${b}`, PER_BATCH));
  await stores.close();
  return dataDir;
}

/** A fresh copy of `dataDir`: the whole backlog again. */
function copied(dataDir: string): string {
  const copy = tempDir();
  cpSync(dataDir, copy, { recursive: true });
  return copy;
}

describe("a stop past its deadline while the Parquet copy writes", () => {
  it("exits without aborting, and the next start copies every stored event", { timeout: 300_000 }, async () => {
    const backlog = await seeded();
    let dataDir = backlog;
    for (const { afterMs, deadlineMs } of STOPS) {
      dataDir = copied(backlog);
      const stopped = await runChild("stop-mid-copy-child.ts", [dataDir, afterMs, deadlineMs]);
      expect({ afterMs, deadlineMs, signal: stopped.signal, aborted: stopped.stderr.includes("terminate called") }).toEqual({ afterMs, deadlineMs, signal: null, aborted: false });
      expect([0, 1]).toContain(stopped.code); // 1: the stop passed its deadline
    }
    // What the last stop left undelivered is delivered by the next start.
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir });
    try {
      for (let waited = 0; (await parquetRows(dataDir)).length < BACKLOG_BATCHES * PER_BATCH && waited < 120_000; waited += 200) await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      await server.close();
    }
    expect(new Set((await parquetRows(dataDir)).map((row) => row.seq)).size).toBe(BACKLOG_BATCHES * PER_BATCH);
  });

  it("a halt never terminates the thread inside a DuckDB call: it waits for the call, then ends it", { timeout: 60_000 }, async () => {
    for (let i = 0; i < 3; i++) {
      const halted = await runChild("stop-mid-copy-halt-child.ts", [tempDir(), "busy", 1]);
      expect({ signal: halted.signal, code: halted.code, aborted: halted.stderr.includes("terminate called") }).toEqual({ signal: null, code: 0, aborted: false });
      expect(JSON.parse(halted.stdout)).toEqual({ thread: "terminated", duckOpen: true });
    }
  });

  it("a DuckDB call that outlasts the halt's wait is left running, and the process ends by SIGKILL, never an abort", { timeout: 60_000 }, async () => {
    const halted = await runChild("stop-mid-copy-halt-child.ts", [tempDir(), "busy", 1, 1]);
    expect({ signal: halted.signal, aborted: halted.stderr.includes("terminate called") }).toEqual({ signal: "SIGKILL", aborted: false });
    expect(JSON.parse(halted.stdout)).toEqual({ thread: "in-call", duckOpen: true });
    expect(halted.stderr).toMatch(/the Parquet copy thread held in a native call/);
  });

  it("a halt with no grace, at any moment of the copy, ends the thread without aborting", { timeout: 120_000 }, async () => {
    const backlog = await seeded();
    for (const afterMs of HALTS) {
      const halted = await runChild("stop-mid-copy-halt-child.ts", [copied(backlog), afterMs, 1]);
      expect({ afterMs, signal: halted.signal, code: halted.code, aborted: halted.stderr.includes("terminate called") }).toEqual({ afterMs, signal: null, code: 0, aborted: false });
      expect(JSON.parse(halted.stdout)).toHaveProperty("thread");
    }
  });
});
