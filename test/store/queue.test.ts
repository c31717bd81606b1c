// The FIFO queue behind the batches waiting to be derived or copied: the same answers as a plain
// array's push and shift, across the compactions a long queue goes through.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Queue } from "../../src/store/queue.js";

describe("Queue", () => {
  it("answers as an array's push, shift, length and index would, through runs long enough to compact", () => {
    const run = fc.array(fc.tuple(fc.constantFrom("push", "shift"), fc.integer({ min: 1, max: 3_000 })), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(run, (steps) => {
        const queue = new Queue<number>();
        const model: number[] = [];
        let next = 0;
        for (const [op, times] of steps) {
          for (let k = 0; k < times; k++) {
            if (op === "push") {
              queue.push(next);
              model.push(next++);
            } else {
              expect(queue.shift()).toBe(model.shift());
            }
          }
          expect(queue.length).toBe(model.length);
          expect([0, 1, model.length - 1, model.length].map((i) => queue.at(i))).toEqual([0, 1, model.length - 1, model.length].map((i) => model[i]));
        }
      }),
      { numRuns: 300 },
    );
  });
});
