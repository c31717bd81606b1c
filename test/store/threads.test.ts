// The store's worker threads (the log writer, the Parquet copy) start with heap bounds that keep
// V8 from growing their heaps far past what they hold live, and give their young generation back
// once they idle (src/store/threads.ts, thread-entry.ts).
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { startThread } from "../../src/store/threads.js";

const MiB = 1024 * 1024;

describe("startThread", () => {
  it("bounds the thread's heap at 512 MiB of old generation, where V8's default is a quarter of the machine's memory", async () => {
    const thread = startThread(new URL("./heap-limits-thread.js", import.meta.url), {});
    const [limit] = (await once(thread, "message")) as [number];
    await once(thread, "exit");
    // heap_size_limit is the old generation's bound plus the young generation's.
    expect(limit).toBeGreaterThanOrEqual(512 * MiB);
    expect(limit).toBeLessThan(540 * MiB);
  });

  it("gives the thread's young generation back once it goes quiet after a load", async () => {
    const thread = startThread(new URL("./young-thread.js", import.meta.url), {});
    const sizes: number[] = [];
    thread.on("message", (bytes: number) => sizes.push(bytes));
    await once(thread, "exit");
    // The load grew the new space to its bound (8 MiB); left alone it stays there.
    expect(sizes[0]).toBeGreaterThanOrEqual(4 * MiB);
    expect(sizes.at(-1)).toBeLessThanOrEqual(2 * MiB);
  }, 60_000);
});
