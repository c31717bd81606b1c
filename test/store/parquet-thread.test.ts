// The Parquet copy's thread yields the core to requests: on Linux it runs at a lower priority
// (its own nice value), while the server's threads keep theirs.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ParquetThread } from "../../src/store/parquet/parquet-thread.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";

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
      let added: number[] = [];
      for (let tries = 0; tries < 100 && !added.some((tid) => threadNices().get(tid) === lowered); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        added = [...threadNices().keys()].filter((tid) => !before.has(tid));
      }
      const nices = threadNices();
      expect(added.map((tid) => nices.get(tid))).toContain(lowered);
      for (const [tid, nice] of before) if (nices.has(tid)) expect(nices.get(tid)).toBe(nice);
    } finally {
      await thread.close();
    }
  });
});
