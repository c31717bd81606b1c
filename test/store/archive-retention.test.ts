// The Parquet archive's retention (src/store/parquet/archive-retention.ts): days wholly before the
// cutoff dropped, the day it falls in rewritten without its older events, never an event received
// at or after it deleted, and a SIGKILL mid-rewrite losing or duplicating nothing.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventView } from "../../src/store/columnar/event-view.js";
import { folderSpan, pruneArchive } from "../../src/store/parquet/archive-retention.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { StoredEvent } from "../../src/store/types.js";
import { parquetRows } from "./parquet-files.js";

const CHILD = join(import.meta.dirname, "archive-retention-child.ts");
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The rule's cutoff: events received before it go. Mid-day, so that its day straddles it. */
const CUTOFF_MS = Date.parse("2026-11-20T12:00:00.000Z");
const SECOND = 1000;
const HOUR = 3_600_000;

/** Receive times (offsets from the cutoff) of the events, in seq order: three days, two projects. */
const OFFSETS = [
  -36 * HOUR, -30 * HOUR, // 2026-11-19: wholly before the cutoff
  -11 * HOUR, -SECOND, 0, SECOND, 5 * HOUR, // 2026-11-20: the day the cutoff falls in
  13 * HOUR, 14 * HOUR, // 2026-11-21: wholly after
];

function event(i: number, offsetMs: number): StoredEvent {
  const at = new Date(CUTOFF_MS + offsetMs).toISOString();
  const projectId = i % 2 === 0 ? "shop" : "blog";
  return { id: `e-${i}`, receivedAt: at, orgId: "org-1", projectId, env: "production", type: "track", unitKey: `u${i}`, timestamp: at, name: "buy", body: { type: "track", unitKey: `u${i}`, timestamp: at, event: "buy", value: i } };
}

/** Seqs (1-based) of the events the rule keeps: received at or after the cutoff. */
const YOUNGER = OFFSETS.flatMap((offset, k) => (offset >= 0 ? [k + 1] : []));

/** A data folder whose store holds the events `rounds` times over (one delivery each), all archived. */
async function archived(rounds = 1): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "vane-archive-retention-"));
  dirs.push(dataDir);
  const stores = openSqliteStores({ dataDir });
  const sink = new NodeFileSink(join(dataDir, "parquet"));
  const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
  try {
    for (let round = 0; round < rounds; round++) {
      await stores.events.append(OFFSETS.map((offset, k) => event(round * OFFSETS.length + k + 1, offset)));
      await new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows }).catchUp();
    }
  } finally {
    writer.close();
    await stores.close();
  }
  return dataDir;
}

/** The seqs a reader sees, in order, and their count. */
async function viewed(dataDir: string): Promise<{ count: number; seqs: number[] }> {
  const stores = openSqliteStores({ dataDir });
  const view = await EventView.open({ events: stores.events, parquetDir: join(dataDir, "parquet"), settings: { threads: 1 } });
  try {
    const seqs = (await view.list({ limit: 1000 })).map((e) => e.seq).sort((a, b) => a - b);
    return { count: await view.count(), seqs };
  } finally {
    view.close();
    await stores.close();
  }
}

const days = (dataDir: string, project: string) => readdirSync(join(dataDir, "parquet", "events", "org=org-1", `project=${project}`, "env=production")).sort();
const rawSeqs = async (dataDir: string) => (await parquetRows(dataDir)).map((row) => Number(row.seq)).sort((a, b) => a - b);

function prunedInChild(root: string, point: string): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, root, String(CUTOFF_MS), point], { stdio: ["ignore", "ignore", "inherit"] });
  return new Promise((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
}

describe("the archive's retention", () => {
  it("drops the days wholly before the cutoff, rewrites the day it falls in, and keeps every event received at or after it", async () => {
    const dataDir = await archived();
    const sink = new NodeFileSink(join(dataDir, "parquet"));
    const later = join(dataDir, "parquet", "events/org=org-1/project=shop/env=production/day=2026-11-21");
    const [laterFile] = readdirSync(later);
    const laterBytes = readFileSync(join(later, laterFile!));

    expect(await pruneArchive(sink, CUTOFF_MS)).toEqual({ filesDeleted: 2, filesRewritten: 2 });
    expect(days(dataDir, "shop")).toEqual(["day=2026-11-20", "day=2026-11-21"]);
    expect(days(dataDir, "blog")).toEqual(["day=2026-11-20", "day=2026-11-21"]);
    // One second younger than the rule survives; one second older does not.
    expect(await viewed(dataDir)).toEqual({ count: YOUNGER.length, seqs: YOUNGER });
    expect(await rawSeqs(dataDir)).toEqual(YOUNGER);
    // A day after the cutoff is left as it was, byte for byte; a second run has nothing to do.
    expect(readFileSync(join(later, laterFile!))).toEqual(laterBytes);
    expect(await pruneArchive(sink, CUTOFF_MS)).toEqual({ filesDeleted: 0, filesRewritten: 0 });
  });

  for (const point of ["before-rename", "after-rename"]) {
    it(`a SIGKILL mid-rewrite (${point}) leaves every younger event exactly once, and the next run finishes`, async () => {
      const dataDir = await archived(2); // two files in each folder: the kill comes with one rewritten at most
      const root = join(dataDir, "parquet");
      expect(await prunedInChild(root, point)).toBe("SIGKILL");
      const younger = [...YOUNGER, ...YOUNGER.map((seq) => seq + OFFSETS.length)];
      const seen = await viewed(dataDir);
      expect(new Set(seen.seqs).size).toBe(seen.count);
      expect(seen.seqs.filter((seq) => younger.includes(seq))).toEqual(younger);

      await pruneArchive(new NodeFileSink(root), CUTOFF_MS);
      expect(await viewed(dataDir)).toEqual({ count: younger.length, seqs: younger });
      expect(await rawSeqs(dataDir)).toEqual(younger);
    });
  }

  it("reads a partition's time span from its folder, in either layout, and none from other folders", () => {
    expect(folderSpan("events/org=o/project=p/env=e/day=2026-11-20")).toEqual({ startMs: Date.parse("2026-11-20T00:00:00Z"), endMs: Date.parse("2026-11-21T00:00:00Z") });
    expect(folderSpan("events/dt=2026-11-20/hour=13")).toEqual({ startMs: Date.parse("2026-11-20T13:00:00Z"), endMs: Date.parse("2026-11-20T14:00:00Z") });
    expect(folderSpan("events/org=o/project=p/env=e")).toBeUndefined();
    expect(folderSpan("events/org=o/project=p/env=e/day=someday")).toBeUndefined();
  });

  it("leaves an archive without files as it is", async () => {
    const root = join(mkdtempSync(join(tmpdir(), "vane-archive-retention-")), "parquet");
    dirs.push(root);
    expect(await pruneArchive(new NodeFileSink(root), CUTOFF_MS)).toEqual({ filesDeleted: 0, filesRewritten: 0 });
    expect(existsSync(root)).toBe(false);
  });
});
