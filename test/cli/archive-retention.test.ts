// `vane events prune --archive-retain-days D`: the Parquet archive's own retention rule, off unless
// given (the archive is the long-term record); the reading verbs then count what it kept.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import type { StoredEvent } from "../../src/store/types.js";
import { inStore, tempDir, vane } from "./helpers.js";

const DAY = 86_400_000;
const HOUR = 3_600_000;

function event(i: number, ageMs: number): StoredEvent {
  const at = new Date(Date.now() - ageMs).toISOString();
  return { id: `e-${i}`, receivedAt: at, orgId: "org-1", projectId: "shop", env: "production", type: "track", unitKey: `u${i}`, timestamp: at, name: "buy", body: { type: "track", unitKey: `u${i}`, timestamp: at, event: "buy" } };
}

/** Events received 10 days, 5 days and an hour, 5 days less an hour, and a day ago, all in the archive. */
async function archivedStore(): Promise<string> {
  const data = tempDir();
  await inStore(data, async (stores) => {
    await stores.events.append([event(1, 10 * DAY), event(2, 5 * DAY + HOUR), event(3, 5 * DAY - HOUR), event(4, DAY)]);
    const sink = new NodeFileSink(join(data, "parquet"));
    const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
    await new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows }).catchUp();
    writer.close();
  });
  return data;
}

describe("vane events prune --archive-retain-days", () => {
  it("deletes the archive's events received before the rule, and only with the option", async () => {
    const data = await archivedStore();
    // The log's own retention (a year here) never touches the archive.
    const plain = await vane("events", "prune", "--retain-days", "365", "--data", data);
    expect(plain.out).not.toContain("Parquet archive");
    expect((await vane("events", "count", "--data", data)).out).toBe("4");

    const run = await vane("events", "prune", "--retain-days", "365", "--archive-retain-days", "5", "--data", data);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/\nThe Parquet archive: events received before \S+Z deleted \(\d+ files deleted, \d+ rewritten\)\.$/);
    expect((await vane("events", "count", "--data", data)).out).toBe("2");
    const kept = (await vane("events", "list", "--data", data)).out.split("\n").map((line) => (JSON.parse(line) as { id: string }).id);
    expect(kept).toEqual(["e-4", "e-3"]);
  });

  it("refuses a rule that is not a positive number", async () => {
    const run = await vane("events", "prune", "--archive-retain-days", "0", "--data", tempDir());
    expect(run.code).toBe(2);
    expect(run.err).toContain('--archive-retain-days must be a number greater than 0, got "0"');
  });
});
