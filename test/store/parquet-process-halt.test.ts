// ParquetProcess's close and halt are bounded, whatever the copy does: a copy that reads no
// message (blocked, or SIGSTOPped) is killed (SIGKILL) past its grace, and the server's stop goes
// on; one that ends as asked is not killed. The blocked copy is parquet-hung-copy.ts's stand-in.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ParquetProcess, haltProblem } from "../../src/store/parquet/parquet-process.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { alive } from "../copy-processes.js";
import { makeBatch } from "./fixtures.js";

const CLOSE_MS = 200;
const HALT_MS = 300;
const KILL_MS = 1_000;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-halt-"));
  dirs.push(dir);
  return dir;
}

const hung = (dir: string) => new ParquetProcess({ dataDir: dir, intervalMs: 60_000, flushRows: 1_000 }, { closeMs: CLOSE_MS, haltMs: HALT_MS, killMs: KILL_MS }, new URL("./parquet-hung-copy.js", import.meta.url));

describe.skipIf(process.platform !== "linux")("ParquetProcess's halt on a copy that does not end (Linux: processes read from /proc)", () => {
  it("kills a copy that reads no message past its grace, and says so", { timeout: 30_000 }, async () => {
    const copy = hung(dataDir());
    await copy.idle; // it is blocked from here on
    const started = Date.now();
    const outcome = await copy.halt();
    const waited = Date.now() - started;
    expect(outcome).toEqual({ process: "killed" });
    expect(haltProblem(outcome)).toMatch(/was killed \(SIGKILL\)/);
    expect(waited).toBeGreaterThanOrEqual(HALT_MS - 5); // it gave the copy its grace
    expect(waited).toBeLessThan(HALT_MS + KILL_MS + 500);
    expect(alive(copy.pid!)).toBe(false);
    expect(await copy.close()).toBeUndefined(); // after the halt, a close has nothing to wait for
  });

  it("a close of a SIGSTOPped copy halts it, then kills it within its bounds", { timeout: 30_000 }, async () => {
    const dir = dataDir();
    const stores = openSqliteStores({ dataDir: dir });
    await stores.events.append(makeBatch("a", 5));
    await stores.close();
    const copy = new ParquetProcess({ dataDir: dir, intervalMs: 60_000, flushRows: 1_000 }, { closeMs: CLOSE_MS, haltMs: HALT_MS, killMs: KILL_MS });
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(copy.pid!, "SIGSTOP");
    const started = Date.now();
    expect(await copy.close()).toEqual({ process: "killed" });
    expect(Date.now() - started).toBeLessThan(CLOSE_MS + HALT_MS + KILL_MS + 500);
    expect(alive(copy.pid!)).toBe(false);
  });

  it("a halt of a copy that ends as asked does not kill it", { timeout: 30_000 }, async () => {
    const copy = new ParquetProcess({ dataDir: dataDir(), intervalMs: 60_000, flushRows: 1_000 }, { haltMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const outcome = await copy.halt();
    expect(outcome).toEqual({ process: "ended" });
    expect(haltProblem(outcome)).toBeUndefined();
    expect(alive(copy.pid!)).toBe(false);
  });
});
