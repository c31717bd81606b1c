// The Parquet copy's process runs only while there is something to copy (ParquetRole): a real
// `vane serve` with no events has no copy process and no DuckDB; events start one, which
// archives them and exits once caught up (idle); the next events start another; events another
// process stored are found by the role's look at the store while no copy runs. DuckDB is never
// loaded in the server itself, and the server's stop leaves no copy running.
import { describe, expect, it } from "vitest";
import { startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { tempDir } from "../cli/helpers.js";
import { type ServeProcess, serveProcess } from "../cli/serve-process.js";
import { alive, childrenOf, mapsDuckDb } from "../copy-processes.js";
import { makeBatch } from "../store/fixtures.js";
import { parquetRows } from "../store/parquet-files.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function send(served: ServeProcess, tag: string, count: number): Promise<void> {
  const events = Array.from({ length: count }, (_, i) => ({ id: `${tag}-${i}`, type: "track", unitKey: `u-${tag}-${i}`, timestamp: new Date().toISOString(), event: "purchase", properties: { sku: "A-1" } }));
  const response = await fetch(`${served.url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${served.pk}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }) });
  expect(response.status).toBe(200);
  expect(((await response.json()) as { accepted: number }).accepted).toBe(count);
}

/** Waits until `done`, up to 60 s; the copy processes seen meanwhile. */
async function until(pid: number, done: () => Promise<boolean>): Promise<Set<number>> {
  const seen = new Set<number>();
  for (let waited = 0; waited < 60_000; waited += 100) {
    for (const child of childrenOf(pid)) seen.add(child);
    if (await done()) return seen;
    await sleep(100);
  }
  throw new Error("timed out");
}

describe.skipIf(process.platform !== "linux")("vane serve's Parquet copy on demand (Linux: processes found in /proc)", () => {
  it("an idle server has no copy process and no DuckDB; events start one, which archives them and exits; more events start another", async () => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--log-level", "silent"]);
    const pid = served.child.pid!;
    await sleep(1_500);
    expect(childrenOf(pid)).toEqual([]);
    expect(mapsDuckDb(pid)).toBe(false);

    const archived = async (n: number) => (await parquetRows(dataDir)).filter((row) => row.type === "track").length === n;
    await send(served, "first", 20);
    const first = await until(pid, () => archived(20));
    expect(first.size).toBe(1); // a copy process did the work
    await until(pid, async () => childrenOf(pid).length === 0); // and exited once caught up
    expect(mapsDuckDb(pid)).toBe(false); // DuckDB was loaded there, never here

    await send(served, "second", 20);
    const second = await until(pid, () => archived(40));
    expect(second.size).toBe(1);
    expect([...second][0]).not.toBe([...first][0]); // another process
    const seqs = (await parquetRows(dataDir)).map((row) => Number(row.seq));
    expect(seqs.length).toBe(40); // each event once
    expect(new Set(seqs).size).toBe(40);

    // Stopped while a copy runs: the stop ends it, and leaves none running.
    await send(served, "third", 20);
    let copies: number[] = [];
    await until(pid, async () => (copies = childrenOf(pid)).length > 0);
    served.child.kill("SIGTERM");
    expect(await served.exited).toEqual({ code: 0, signal: null });
    expect(copies.filter(alive)).toEqual([]);
    expect((await parquetRows(dataDir)).length).toBe(60); // its last delivery came first
  }, 120_000);
});

describe("vane serve's Parquet copy while no copy runs", () => {
  it("finds events another process stored, starts a copy, and archives them", async () => {
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
