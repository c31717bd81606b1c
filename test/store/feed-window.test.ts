// The Parquet copy's feed is bounded where the log writer's thread fills it (feed-window.ts): a
// copy that does not read its port (niced on a busy core) holds at most the window there, and
// once it takes what the port holds, batches flow again; what was not posted stays in the log.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { receiveMessageOnPort } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { FEED_WINDOW_CHARS } from "../../src/store/feed-window.js";
import { CommittedFeed } from "../../src/store/parquet/committed-feed.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { makeBatch } from "./fixtures.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** 100 events of ~10 KB each: ~1 MB of log-row text per append. */
const batch = (tag: string) => makeBatch(tag, 100, { body: { type: "track", event: "big", text: tag.padEnd(10_000, "x") } });

describe("the copy's feed", () => {
  it("holds at most the window on a port nobody reads, and flows again once the copy takes it", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-feed-window-"));
    dirs.push(dataDir);
    const stores = openSqliteStores({ dataDir, writer: "worker" });
    const port = stores.events.committedFeed?.();
    expect(port).toBeDefined();
    try {
      // ~24 MB committed while the port is not read.
      for (let b = 0; b < 24; b++) await stores.events.append(batch(`a${b}`));
      let queued = 0;
      const window = receiveMessageOnPort(port!)?.message;
      expect(window).toBeInstanceOf(Int32Array);
      for (let m = receiveMessageOnPort(port!); m !== undefined; m = receiveMessageOnPort(port!)) {
        for (const row of m.message as { text: string }[]) queued += row.text.length;
      }
      expect(queued).toBeGreaterThan(0);
      expect(queued).toBeLessThanOrEqual(FEED_WINDOW_CHARS);
      // What the copy takes off the port is counted as taken: ~24 MB more all come through memory.
      const feed = new CommittedFeed(stores.events.committedFeed!()!);
      let cursor = 24 * 100;
      for (let b = 0; b < 24; b++) {
        await stores.events.append(batch(`b${b}`));
        cursor += feed.take(cursor, 1_000).reduce((events, row) => events + row.count, 0);
      }
      expect(feed.fromMemory).toBe(24 * 100);
      feed.close();
    } finally {
      await stores.close();
    }
  }, 60_000);
});
