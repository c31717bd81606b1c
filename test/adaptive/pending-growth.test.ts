// The pending book grows by chunks (issue 33): a slot keeps its number and its values as the
// columns gain chunks, a number column widens in every chunk at once, and the oldest spill past
// the learner's bound while the id table is doubling.
import { describe, expect, it } from "vitest";
import { CHUNK } from "../../src/adaptive/chunks.js";
import { NumberColumn } from "../../src/adaptive/number-column.js";
import { PendingBook } from "../../src/adaptive/pending.js";
import { T0, described, made } from "./pending-fixtures.js";

const DAY = 86_400_000;

const DECISIONS = Array.from({ length: 60_000 }, (_, i) => made(i));
const decision = (i: number) => DECISIONS[i]!;

/** The decisions from..to (every step-th) that the book does not find by id. */
function lostOf(book: PendingBook, from: number, to: number, step: number): number[] {
  const lost: number[] = [];
  for (let i = from; i < to; i += step) if (book.of(decision(i).decisionId)?.filter((q) => q.seq === i + 1).length !== 1) lost.push(i);
  return lost;
}

describe("the pending book in chunks", () => {
  it("grows across chunk boundaries with every slot where it was and every decision found", () => {
    const book = new PendingBook();
    const n = 2 * CHUNK + 100;
    const slotOf: number[] = [];
    let capacities = 0;
    for (let i = 0; i < n; i++) {
      const before = book.slots;
      book.add(decision(i));
      if (book.slots !== before) {
        capacities++;
        // Decisions added before the growth, near the chunk's edges: same slot, same values.
        for (const j of [0, 1, Math.max(0, i - 2), Math.max(0, i - 1), i >> 1]) {
          const [p] = book.of(decision(j).decisionId)!.filter((q) => q.seq === j + 1);
          expect(p!.slot, `decision ${j} after growing to ${book.slots}`).toBe(slotOf[j]);
          expect(described(p!)).toEqual(described(decision(j)));
        }
      }
      slotOf[i] = book.of(decision(i).decisionId)!.find((q) => q.seq === i + 1)!.slot;
    }
    // 1,024 doubled to a whole chunk (5 growths), then two chunks more.
    expect(book.slots).toBe(3 * CHUNK);
    expect(capacities).toBe(6);
    for (let i = 0; i < n; i++) {
      const found = book.of(decision(i).decisionId)!.filter((q) => q.seq === i + 1);
      expect(found.map(described), `decision ${i}`).toEqual([described(decision(i))]);
    }
    expect(book.oldest(3, 0).map((slot) => book.seqAt(slot))).toEqual([1, 2, 3]);
  });

  it("spills the oldest past a bound while the id table doubles, the rest found and the spilled gone", () => {
    const book = new PendingBook();
    const bound = 42_000; // past 40,960 entries the table doubles from 65,536 buckets, over 4,096 insertions
    let spilledWhileDoubling = 0;
    for (let i = 0; i < 60_000; i++) {
      book.add(decision(i));
      const excess = book.size - bound;
      if (excess >= 50) {
        // As the learner does past its bound: the oldest go to the store, a page at a time.
        if (book.doubling) spilledWhileDoubling++;
        const out = book.oldest(excess, Number.POSITIVE_INFINITY, excess);
        book.removeOldest(out);
        expect(book.size).toBe(bound);
        if (book.doubling) expect(lostOf(book, i + 1 - bound, i + 1, 5)).toEqual([]); // entries in both tables
      }
    }
    expect(spilledWhileDoubling).toBeGreaterThan(0);
    const first = 60_000 - book.size;
    for (let i = first - 20; i < first; i++) expect(book.of(decision(i).decisionId)?.some((q) => q.seq === i + 1) ?? false).toBe(false);
    expect(lostOf(book, first, 60_000, 1)).toEqual([]);
    for (let i = first; i < 60_000; i += 97) expect(book.of(decision(i).decisionId)!.filter((q) => q.seq === i + 1).map(described)).toEqual([described(decision(i))]);
  });
});

describe("a number column in chunks", () => {
  it("widens every chunk at once when a value does not fit in 4 bytes, and stays wide as it grows", () => {
    const column = new NumberColumn(true);
    column.grow(CHUNK);
    column.grow(2 * CHUNK);
    column.grow(3 * CHUNK);
    const slots = [0, CHUNK - 1, CHUNK, 2 * CHUNK + 5, 3 * CHUNK - 1];
    slots.forEach((slot, i) => column.set(slot, T0 + i * DAY));
    expect(column.bytesPerSlot).toBe(4);
    column.set(7, T0 + 40 * DAY); // past ~24 days from the first: the column widens
    expect(column.bytesPerSlot).toBe(8);
    slots.forEach((slot, i) => expect(column.get(slot), `slot ${slot}`).toBe(T0 + i * DAY));
    expect(column.get(7)).toBe(T0 + 40 * DAY);
    column.grow(4 * CHUNK);
    column.set(4 * CHUNK - 1, T0 - 30 * DAY + 0.5);
    expect(column.get(4 * CHUNK - 1)).toBe(T0 - 30 * DAY + 0.5);
    expect(column.get(CHUNK)).toBe(T0 + 2 * DAY);
  });

  it("keeps seqs narrow below 2^32 in every chunk, and widens past it", () => {
    const column = new NumberColumn(false);
    column.grow(CHUNK);
    column.grow(2 * CHUNK);
    column.set(CHUNK + 3, 2 ** 32 - 1);
    column.set(2, 1);
    expect(column.bytesPerSlot).toBe(4);
    column.set(CHUNK + 4, 2 ** 32);
    expect(column.bytesPerSlot).toBe(8);
    expect([column.get(2), column.get(CHUNK + 3), column.get(CHUNK + 4)]).toEqual([1, 2 ** 32 - 1, 2 ** 32]);
  });
});
