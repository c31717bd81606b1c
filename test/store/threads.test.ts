// The store's worker threads (the log writer, the Parquet copy) start with heap bounds that keep
// V8 from growing their heaps far past what they hold live (src/store/threads.ts).
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
});
