// The log writer's thread fed through its ring (append-ring.ts) when the ring is small: a turn
// with more appends than it holds, a text larger than it, the thread replaced while appends wait
// in it, and a close with appends still waiting for its room. Nothing is lost, nothing repeated,
// and the log holds the appends in the order they were made.
import path from "node:path";
import type { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { DB_FILE_NAME, openSqliteStores } from "../../src/store/sqlite/index.js";
import { WorkerLogWriter } from "../../src/store/sqlite/writer/log-writer.js";
import { rowFacts } from "../../src/store/sqlite/writer/row-facts.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import type { AppendReceipt, StoredEvent } from "../../src/store/types.js";
import { makeEvent, tempDirs } from "./fixtures.js";

/** 4 KiB: half of it, the largest record, holds a text of ~650 characters. */
const RING_BYTES = 4096;

const appendOf = (events: readonly StoredEvent[]) => ({ row: encodeLogRow(events), count: events.length, facts: rowFacts(events) });

describe("appends through a small ring", () => {
  const tempDir = tempDirs("vane-writer-ring-");

  /** A migrated log file and a writer thread on it. */
  function writerOn(dir: string): WorkerLogWriter {
    const stores = openSqliteStores({ dataDir: dir });
    void stores.close();
    return new WorkerLogWriter({ path: path.join(dir, DB_FILE_NAME), busyTimeoutMs: 5_000, ringBytes: RING_BYTES });
  }

  async function logOf(dir: string): Promise<{ seq: number; id: string }[]> {
    const stores = openSqliteStores({ dataDir: dir });
    try {
      return (await stores.events.readAfter(0, 10_000)).map(({ seq, event }) => ({ seq, id: event.id }));
    } finally {
      await stores.close();
    }
  }

  const inOrder = (events: readonly StoredEvent[]) => events.map((event, i) => ({ seq: i + 1, id: event.id }));

  it("takes a turn of more appends than it holds, and texts larger than it, in order", async () => {
    const dir = tempDir();
    const writer = writerOn(dir);
    // ~60 records of ~300 bytes in one turn (the ring holds ~13), every tenth one of 10 KB.
    const events = Array.from({ length: 60 }, (_, i) => makeEvent(`e${i}`, i % 10 === 9 ? { body: { type: "track", pad: "p".repeat(10_000) } } : {}));
    const receipts = await Promise.all(events.map((event) => writer.append(appendOf([event]))));
    expect(receipts.map((r) => r.lastSeq)).toEqual(events.map((_, i) => i + 1));
    await writer.close();
    expect(await logOf(dir)).toEqual(inOrder(events));
  });

  it("commits on close what still waits for the ring's room", async () => {
    const dir = tempDir();
    const writer = writerOn(dir);
    const events = Array.from({ length: 40 }, (_, i) => makeEvent(`c${i}`));
    const appended = events.map((event) => writer.append(appendOf([event])));
    const closed = writer.close();
    expect((await Promise.all(appended)).map((r) => r.lastSeq)).toEqual(events.map((_, i) => i + 1));
    await closed;
    expect(await logOf(dir)).toEqual(inOrder(events));
  });

  it("fails the appends a dead thread held, and its replacement never stores them", async () => {
    const dir = tempDir();
    const writer = writerOn(dir);
    const lost = Array.from({ length: 30 }, (_, i) => makeEvent(`lost${i}`));
    const failed = lost.map((event) => writer.append(appendOf([event])).then(() => "stored", () => "failed"));
    // Dead before it took anything: the ring holds these appends, and a backlog waits for its room.
    await (writer as unknown as { worker: Worker }).worker.terminate();
    expect(new Set(await Promise.all(failed))).toEqual(new Set(["failed"]));
    const later = Array.from({ length: 30 }, (_, i) => makeEvent(`later${i}`));
    let receipts: AppendReceipt[] | undefined;
    while (receipts === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      receipts = await Promise.all(later.map((event) => writer.append(appendOf([event])))).catch(() => undefined);
    }
    await writer.close();
    expect(await logOf(dir)).toEqual(inOrder(later));
  });

  it("closes at once while a dead thread awaits its replacement, and starts none after", async () => {
    const dir = tempDir();
    const writer = writerOn(dir);
    const before = makeEvent("before");
    await writer.append(appendOf([before]));
    const dead = (writer as unknown as { worker: Worker }).worker;
    await dead.terminate();
    // The close waited for the dead thread's exit, which had passed: a server's stop hung here.
    const closing = writer.close().then(() => "closed");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise((resolve) => (timer = setTimeout(resolve, 5_000, "still waiting")));
    expect(await Promise.race([closing, hung])).toBe("closed");
    clearTimeout(timer);
    await new Promise((resolve) => setTimeout(resolve, 700)); // past the respawn's pause
    expect((writer as unknown as { worker: Worker }).worker).toBe(dead);
    await expect(writer.append(appendOf([makeEvent("after")]))).rejects.toThrow();
    expect(await logOf(dir)).toEqual(inOrder([before]));
  });
});
