// The Parquet copy's SQLite connection keeps SQLite's default page cache, not better-sqlite3's
// 16 MiB: it reads each page of the log once, and a backlog read with nothing else writing filled
// the cache (copy-stores.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { OpenedStores } from "../../src/store/open-stores.js";
import { COPY_PAGE_CACHE_KIB, openCopyStores } from "../../src/store/parquet/copy-stores.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";

const dirs: string[] = [];
const opened: { close(): unknown }[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const stores of opened.splice(0)) void stores.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-copy-stores-"));
  dirs.push(dir);
  return dir;
}

/** The page cache (PRAGMA cache_size: negative is KiB) of every connection `open` made. */
async function pageCaches(open: () => unknown): Promise<number[]> {
  const pragma = vi.spyOn(Database.prototype, "pragma");
  opened.push((await open()) as OpenedStores);
  const connections = new Set(pragma.mock.contexts as Database.Database[]);
  pragma.mockRestore();
  return [...connections].map((db) => db.pragma("cache_size", { simple: true }) as number);
}

describe("SQLite's page cache of a store's connection", () => {
  it("is better-sqlite3's 16,000 KiB unless pageCacheKiB says", async () => {
    expect(await pageCaches(() => openSqliteStores({ dataDir: tempDir() }))).toEqual([-16_000]);
    expect(await pageCaches(() => openSqliteStores({ dataDir: tempDir(), pageCacheKiB: 512 }))).toEqual([-512]);
  });

  it("refuses a page cache that is not a positive number of KiB", () => {
    for (const pageCacheKiB of [0, -5, 1.5]) expect(() => openSqliteStores({ dataDir: tempDir(), pageCacheKiB })).toThrow(RangeError);
  });

  it("is SQLite's default 2,000 KiB in the Parquet copy's process", async () => {
    expect(COPY_PAGE_CACHE_KIB).toBe(2_000);
    expect(await pageCaches(() => openCopyStores({ dataDir: tempDir() }))).toEqual([-COPY_PAGE_CACHE_KIB]);
  });
});
