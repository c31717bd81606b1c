// A stop while the Parquet copy's process writes: the server never waits for the copy beyond its
// bounds, ends it (a "close", a "halt", SIGKILL past the halt's grace) before it exits, and leaves
// no copy running, not even when the server itself is SIGKILLed (the copy exits on its IPC
// channel's disconnect). Whenever the copy ended, the archive and the checkpoint agree: the next
// start writes what was not delivered, every stored event once, none twice.
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { alive } from "../copy-processes.js";
import { makeBatch, tempDirs } from "../store/fixtures.js";
import { parquetRows } from "../store/parquet-files.js";
import { waitFor } from "../wait.js";

const tempDir = tempDirs("vane-stop-mid-copy-");
const BACKLOG_BATCHES = 40;
const PER_BATCH = 1_000;
const TOTAL = BACKLOG_BATCHES * PER_BATCH;
/** Stops at several moments of the copy's catch-up (ms after the start), each with a deadline short enough that the stop gives up while the copy's last delivery runs. */
const STOPS = Array.from({ length: 6 }, (_, i) => ({ afterMs: 1_500 + 400 * i, deadlineMs: i % 2 === 0 ? 60 : 150 }));
/** Halts with 1 ms of grace, so the copy is killed wherever it is, in ms after its start (it copies from ~1 s on under tsx). */
const HALTS = Array.from({ length: 6 }, (_, i) => 1_000 + 500 * i);

interface Ran {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `child` (a script beside this file) with `args` under tsx: the process, its stderr so far, and its end. */
function startChild(child: string, args: readonly (string | number)[]): { process: ChildProcess; stderr: () => string; done: Promise<Ran> } {
  const spawned = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, child), ...args.map(String)]);
  let [stdout, stderr] = ["", ""];
  spawned.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  spawned.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<Ran>((resolve) => spawned.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { process: spawned, stderr: () => stderr, done };
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

/** Starts a server on `dataDir` until its copy has written every stored event; the archive's seqs. */
async function copiedByNextStart(dataDir: string): Promise<number[]> {
  const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir });
  try {
    await waitFor(async () => (await parquetRows(dataDir)).length >= TOTAL, "the next start's copy of the backlog", { timeoutMs: 120_000, everyMs: 250 });
  } finally {
    await server.close();
  }
  return (await parquetRows(dataDir)).map((row) => Number(row.seq));
}

const expectEachOnce = (seqs: number[]) => {
  expect(seqs.length).toBe(TOTAL); // none twice
  expect(new Set(seqs).size).toBe(TOTAL); // none lost
};

describe.skipIf(process.platform !== "linux")("a stop while the Parquet copy writes (Linux: processes read from /proc)", () => {
  it("exits within its bounds leaving no copy running, and the next start copies every event once", { timeout: 300_000 }, async () => {
    const backlog = await seeded();
    for (const { afterMs, deadlineMs } of STOPS) {
      const dataDir = copied(backlog);
      const stopped = await startChild("stop-mid-copy-child.ts", [dataDir, afterMs, deadlineMs]).done;
      expect({ afterMs, signal: stopped.signal, left: JSON.parse(stopped.stdout || "null"), stderr: stopped.stderr.replace(/^copying \d+\n/, "") }).toEqual({ afterMs, signal: null, left: [], stderr: "" });
      expect([0, 1]).toContain(stopped.code); // 1: the stop passed its deadline
      expectEachOnce(await copiedByNextStart(dataDir));
    }
  });

  it("a halt with no grace kills the copy wherever it is, and the next start copies every event once", { timeout: 300_000 }, async () => {
    const backlog = await seeded();
    const outcomes = new Set<string>();
    for (const afterMs of HALTS) {
      const dataDir = copied(backlog);
      const halted = await startChild("stop-mid-copy-halt-child.ts", [dataDir, afterMs, 1]).done;
      const outcome = JSON.parse(halted.stdout) as { process: string; left: number[] };
      expect({ afterMs, code: halted.code, left: outcome.left, stderr: halted.stderr }).toEqual({ afterMs, code: 0, left: [], stderr: "" });
      outcomes.add(outcome.process);
      expectEachOnce(await copiedByNextStart(dataDir));
    }
    expect(outcomes).toContain("killed");
  });

  it("a SIGKILLed server leaves no copy running: the copy exits on its channel's disconnect", { timeout: 120_000 }, async () => {
    const dataDir = await seeded();
    const server = startChild("stop-mid-copy-child.ts", [dataDir, 600_000, 1_000]);
    let copy: number | undefined;
    await waitFor(() => (copy = Number(/copying (\d+)/.exec(server.stderr())?.[1] ?? 0) || undefined) !== undefined, "the server's copy to start", { everyMs: 50 });
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // busy in DuckDB by now
    server.process.kill("SIGKILL");
    await server.done;
    await waitFor(() => !alive(copy!), "the orphaned copy to exit", { timeoutMs: 10_000, everyMs: 50 });
    expectEachOnce(await copiedByNextStart(dataDir));
  });
});
