// A full disk under the Parquet archive: derivation stops (the checkpoint stays), the log takes
// events all along, and once there is room again the copy resumes and the archive holds every
// event exactly once. The archive sits on a real 1 MiB tmpfs filled to the last byte where this
// process may mount one (root, as CI's container); elsewhere a sink whose writes fail with
// ENOSPC stands in for it.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventView } from "../../src/store/columnar/event-view.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { StoredEvent } from "../../src/store/types.js";
import { parquetRows } from "./parquet-files.js";
import { loggedEvents } from "./logged-events.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function event(i: number): StoredEvent {
  const at = new Date(Date.parse("2026-11-20T10:00:00.000Z") + i * 1000).toISOString();
  return { id: `e-${i}`, receivedAt: at, orgId: "org-1", projectId: "shop", env: "production", type: "track", unitKey: `u${i}`, timestamp: at, name: "buy", body: { type: "track", unitKey: `u${i}`, timestamp: at, event: "buy", value: i, pad: "x".repeat(200) } };
}

/** A sink whose writes fail as a full disk's do while `full` is set. */
class FullableSink extends NodeFileSink {
  full = false;
  override async writeWith(path: string, produce: (temp: string) => Promise<unknown>): Promise<void> {
    if (this.full) throw Object.assign(new Error(`ENOSPC: no space left on device, write '${path}'`), { code: "ENOSPC" });
    return super.writeWith(path, produce);
  }

  override async writeNamed(produce: (temp: string) => Promise<string | undefined>): Promise<boolean> {
    if (this.full) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    return super.writeNamed(produce);
  }
}

/** The archive's folder on a disk that can be filled and freed: a real small tmpfs, or the stand-in. */
function smallDisk(dataDir: string): { sink: NodeFileSink; fill(): void; free(): void } {
  const mountPoint = join(dataDir, "parquet");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint], { stdio: "ignore" });
  } catch {
    const sink = new FullableSink(mountPoint);
    return { sink, fill: () => void (sink.full = true), free: () => void (sink.full = false) };
  }
  cleanups.push(() => execFileSync("umount", [mountPoint]));
  const filler = join(mountPoint, ".filler");
  return {
    sink: new NodeFileSink(mountPoint),
    fill() {
      // To the last block: a big write fails part-way with ENOSPC, then ever smaller ones take the rest.
      for (let size = 1 << 20; size >= 1; size >>= 1) {
        try {
          for (;;) writeFileSync(filler, Buffer.alloc(size), { flag: "a" });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
        }
      }
    },
    free: () => rmSync(filler),
  };
}

describe("a full disk under the archive", () => {
  it("stops the copy without touching the log, which takes events meanwhile; the copy resumes and writes each event once", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vane-disk-full-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    execFileSync("mkdir", ["-p", join(dataDir, "parquet")]);
    const disk = smallDisk(dataDir);
    const stores = openSqliteStores({ dataDir });
    const writer = await DuckArchiveWriter.open(disk.sink, { threads: 1 });
    cleanups.push(() => writer.close());
    const pipeline = new ParquetPipeline({ events: stores.events, sink: disk.sink, writeRows: writer.writeRows, writeDelivery: writer.writeDelivery, intact: writer.intact, batchRows: 50, flushRows: 50 });
    try {
      const append = (from: number, to: number) => stores.events.append(Array.from({ length: to - from + 1 }, (_, k) => event(from + k)));
      await append(1, 100);
      await pipeline.catchUp();
      expect(await stores.events.checkpoint("parquet")).toBe(100);

      disk.fill();
      await append(101, 200); // the log is elsewhere: appends go on
      await expect(pipeline.catchUp()).rejects.toThrow(/No space left on device|ENOSPC/i);
      expect(await stores.events.checkpoint("parquet")).toBe(100);
      await append(201, 300);
      await expect(pipeline.catchUp()).rejects.toThrow(/No space left on device|ENOSPC/i);
      expect(await loggedEvents(stores.events).count()).toBe(300);
      // A failed write leaves no temporary file behind to hold the space.
      const hidden = readdirSync(join(dataDir, "parquet"), { recursive: true }).map(String).filter((name) => name.split("/").some((part) => part.startsWith(".") && part !== ".filler"));
      expect(hidden).toEqual([]);

      disk.free();
      await pipeline.catchUp();
      expect(await stores.events.checkpoint("parquet")).toBe(300);
      const seqs = (await parquetRows(dataDir)).map((row) => Number(row.seq));
      expect(seqs).toEqual(Array.from({ length: 300 }, (_, k) => k + 1));
      const view = await EventView.open({ events: stores.events, parquetDir: join(dataDir, "parquet"), settings: { threads: 1 } });
      try {
        expect(await view.count()).toBe(300);
      } finally {
        view.close();
      }
    } finally {
      await stores.close();
    }
  });
});
