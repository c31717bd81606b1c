// A pending book's queue of slots in log order (issue 33): in chunks, so taking from the head lets
// each chunk go once it is passed and nothing copies more than a chunk.
import { describe, expect, it } from "vitest";
import { CHUNK } from "../../src/adaptive/chunks.js";
import { SlotQueue } from "../../src/adaptive/slot-queue.js";

describe("a slot queue", () => {
  it("keeps order across chunks, renumbers in place, and lets each chunk go once the head passes it", () => {
    const queue = new SlotQueue();
    const model: number[] = [];
    const push = (slot: number) => {
      queue.push(slot);
      model.push(slot);
    };
    for (let i = 0; i < 3 * CHUNK + 5; i++) push(i * 7);
    expect(queue.chunkCount).toBe(4);
    for (let i = 0; i < model.length; i += 997) expect(queue.at(i)).toBe(model[i]);
    queue.set(CHUNK + 2, 11);
    model[CHUNK + 2] = 11;
    const chunksWhileTaking: number[] = [];
    for (let k = 0; k < 2 * CHUNK + 10; k++) {
      expect(queue.shift()).toBe(model.shift());
      if (k % 3 === 0) push(k); // pushes at the tail meanwhile
      chunksWhileTaking.push(queue.chunkCount);
    }
    expect(queue.taken).toBe(2 * CHUNK + 10);
    expect(queue.length).toBe(model.length);
    for (let i = 0; i < model.length; i += 101) expect(queue.at(i)).toBe(model[i]);
    // The chunks the head passed were let go (with the tail's pushes, one more chunk at most).
    expect(Math.min(...chunksWhileTaking.slice(-10))).toBeLessThanOrEqual(3);
    while (model.length > 0) expect(queue.shift()).toBe(model.shift());
    // Emptied, it keeps a small chunk only.
    expect([queue.length, queue.chunkCount]).toEqual([0, 1]);
    expect(queue.room).toBeLessThanOrEqual(16);
    queue.push(3);
    expect([queue.at(0), queue.length]).toEqual([3, 1]);
  });

  it("a queue of a few slots stays in one small chunk, at any count taken", () => {
    const queue = new SlotQueue();
    for (let k = 0; k < 5 * CHUNK; k++) {
      queue.push(k);
      if (k >= 3) expect(queue.shift()).toBe(k - 3);
    }
    expect(queue.chunkCount).toBe(1);
    expect([queue.at(0), queue.at(2), queue.length]).toEqual([5 * CHUNK - 3, 5 * CHUNK - 1, 3]);
  });
});
