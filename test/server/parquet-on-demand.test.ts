// The Parquet copy's thread runs only while there is something to copy (ParquetRole): a real
// `vane serve` with no events holds no copy thread and no DuckDB; events start one, which
// archives them and is ended once caught up; the next events start another; events another process
// stored are found by the role's look at the store while no thread runs. On Linux the copy's
// thread is the one 10 nice levels below the server (parquet-worker.ts), which is how it is found.
import { readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { tempDir } from "../cli/helpers.js";
import { type ServeProcess, serveProcess } from "../cli/serve-process.js";
import { makeBatch } from "../store/fixtures.js";
import { parquetRows } from "../store/parquet-files.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server's threads running 10 nice levels below its main thread: the Parquet copy's. */
function copyThreads(pid: number): number {
  const nice = (tid: string) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
  };
  const lowered = Math.min(19, nice(String(pid)) + 10);
  let count = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (nice(tid) === lowered) count += 1;
    } catch {
      // the thread ended while being read
    }
  }
  return count;
}

const mapsDuckDb = (pid: number) => readFileSync(`/proc/${pid}/maps`, "utf8").includes("duckdb");

async function send(served: ServeProcess, tag: string, count: number): Promise<void> {
  const events = Array.from({ length: count }, (_, i) => ({ id: `${tag}-${i}`, type: "track", unitKey: `u-${tag}-${i}`, timestamp: new Date().toISOString(), event: "purchase", properties: { sku: "A-1" } }));
  const response = await fetch(`${served.url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${served.pk}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }) });
  expect(response.status).toBe(200);
  expect(((await response.json()) as { accepted: number }).accepted).toBe(count);
}

/** Waits until `done`, up to 60 s; whether a copy thread was seen meanwhile. */
async function until(pid: number, done: () => Promise<boolean>): Promise<boolean> {
  let seen = false;
  for (let waited = 0; waited < 60_000; waited += 100) {
    seen ||= copyThreads(pid) > 0;
    if (await done()) return seen;
    await sleep(100);
  }
  throw new Error("timed out");
}

describe.skipIf(process.platform !== "linux")("vane serve's Parquet copy on demand (Linux: threads found by their nice value in /proc)", () => {
  it("an idle server has no copy thread and no DuckDB; events start one, which archives them and ends; more events start another", async () => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--log-level", "silent"]);
    const pid = served.child.pid!;
    await sleep(1_500);
    expect(copyThreads(pid)).toBe(0);
    expect(mapsDuckDb(pid)).toBe(false);

    const archived = async (n: number) => (await parquetRows(dataDir)).filter((row) => row.type === "track").length === n;
    await send(served, "first", 20);
    expect(await until(pid, () => archived(20))).toBe(true); // a copy thread did the work
    await until(pid, async () => copyThreads(pid) === 0); // and was ended once caught up

    await send(served, "second", 20);
    expect(await until(pid, () => archived(40))).toBe(true);
    const seqs = (await parquetRows(dataDir)).map((row) => Number(row.seq));
    expect(new Set(seqs).size).toBe(40); // each event once

    served.child.kill("SIGTERM");
    expect(await served.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});

describe("vane serve's Parquet copy while no thread runs", () => {
  it("finds events another process stored, starts a thread, and archives them", async () => {
    const dataDir = tempDir();
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, catchUpMs: 50 });
    try {
      // Another connection's appends: this server is not told of them, only its look at the store finds them.
      const other = openSqliteStores({ dataDir });
      await other.events.append(makeBatch("other", 5));
      await other.close();
      let archived = 0;
      for (let waited = 0; archived < 5 && waited < 60_000; waited += 100) {
        await sleep(100);
        archived = (await parquetRows(dataDir)).length;
      }
      expect(archived).toBe(5);
    } finally {
      await server.close();
    }
  }, 90_000);
});
