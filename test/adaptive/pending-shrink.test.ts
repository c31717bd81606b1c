// The pending book shrinks without a stall (issue 33): removals move at most a bounded number of
// decisions down (COMPACT_MOVES), across chunk boundaries, and the memory comes back; lookups,
// removals and additions in the middle of a compaction find what they should; a slot number the
// learner holds stays good until the next removal.
import { describe, expect, it } from "vitest";
import { CHUNK } from "../../src/adaptive/chunks.js";
import { COMPACT_MOVES, COMPACT_MOVES_ANYWAY, type Pending, PendingBook } from "../../src/adaptive/pending.js";
import { T0, described, made } from "./pending-fixtures.js";

/** The book's own view of decision i, by id. */
const found = (book: PendingBook, p: Pending) => book.of(p.decisionId)?.filter((q) => q.seq === p.seq) ?? [];

/** The held decisions (every step-th) the book does not give back as they were. */
function wrongOf(book: PendingBook, held: Iterable<Pending>, step = 1): number[] {
  const wrong: number[] = [];
  let k = 0;
  for (const p of held) {
    if (k++ % step !== 0) continue;
    const [q, more] = found(book, p);
    if (q === undefined || more !== undefined || JSON.stringify(described(q)) !== JSON.stringify(described(p))) wrong.push(p.seq);
  }
  return wrong;
}

/** A book and a Map of what it should hold, by seq. */
function filled(n: number, from = 0) {
  const book = new PendingBook();
  const held = new Map<number, Pending>();
  for (let i = from; i < from + n; i++) {
    const p = made(i);
    book.add(p);
    held.set(p.seq, p);
  }
  return { book, held };
}

function closeDue(book: PendingBook, held: Map<number, Pending>, nowMs: number): void {
  book.closeDue(nowMs);
  for (const [seq, p] of held) if (p.closesAt <= nowMs) held.delete(seq);
}

describe("the pending book shrinking", () => {
  it("shrinks across chunk boundaries a bounded number of moves at a time, every decision left found as it was", () => {
    const n = 4 * CHUNK + 500;
    const { book, held } = filled(n);
    expect(book.slots).toBe(5 * CHUNK);
    expect(book.contextRows).toBe(2 * CHUNK); // a third of the decisions are contextual
    const capacities = [book.slots];
    let longest = 0;
    // Until the short window's decisions all closed and the last ~700 of the contextual ones are left.
    for (let now = T0 + 1_000; now <= T0 + n + 3_000; now += 1_500) {
      const [size, moved] = [book.size, book.moved];
      closeDue(book, held, now);
      const moves = book.moved - moved;
      expect(moves, `moves at ${held.size} held`).toBeLessThanOrEqual(Math.min(COMPACT_MOVES, 2 * (size - book.size) + COMPACT_MOVES_ANYWAY));
      longest = Math.max(longest, moves);
      if (book.slots !== capacities[capacities.length - 1]) capacities.push(book.slots);
      expect(wrongOf(book, held.values(), 7), `at ${held.size} held`).toEqual([]);
    }
    // It did compact (the most a call allows), and let the chunks go over many calls, then cut the only chunk.
    expect(longest).toBe(COMPACT_MOVES);
    expect(capacities.length).toBeGreaterThanOrEqual(4);
    expect(capacities).toEqual([...capacities].sort((a, b) => b - a));
    expect(capacities.some((slots) => slots < CHUNK)).toBe(true);
    // Calls that close nothing still compact, a few at a time, until the book is dense.
    for (let k = 0; k < 200 && book.compactingNow; k++) book.closeDue(T0);
    expect(book.compactingNow).toBe(false);
    expect(wrongOf(book, held.values())).toEqual([]);
    expect(held.size).toBeGreaterThan(500);
    expect(book.slots).toBeLessThanOrEqual(4 * held.size);
    expect(book.contextRows).toBeLessThanOrEqual(4 * held.size);
    expect(book.top).toBeLessThanOrEqual(held.size * 1.25 + 1);
    closeDue(book, held, T0 + n + 5_000);
    expect([book.size, book.slots, book.top, book.contextRows]).toEqual([0, 1024, 0, 0]);
    expect(book.buckets).toBeLessThanOrEqual(128);
  });

  it("finds, removes and adds decisions while a compaction is under way, and grows again in the middle of one", () => {
    const n = 3 * CHUNK;
    const { book, held } = filled(n);
    closeDue(book, held, T0 + Math.floor(n * 0.7) + 1_000); // the short window's first 70 %
    expect(book.compactingNow).toBe(true);
    const moved = book.moved;
    let next = n;
    let during = 0;
    let regrown = false;
    for (let round = 0; book.compactingNow || !regrown; round++) {
      if (book.compactingNow) during++;
      expect(wrongOf(book, held.values(), 3), `round ${round}`).toEqual([]);
      // The spill's removal of the oldest: what `oldest` gave, removed.
      const out = book.oldest(20, Number.NEGATIVE_INFINITY, 20);
      const seqs = out.map((slot) => book.seqAt(slot));
      book.removeOldest(out);
      for (const seq of seqs) {
        const gone = held.get(seq)!;
        held.delete(seq);
        expect(found(book, gone)).toEqual([]);
      }
      // New decisions take the lowest free slots; once, enough of them to grow the book again mid-compaction.
      const adding = round === 5 ? 2 * CHUNK : 40;
      if (round === 5) {
        expect(book.compactingNow).toBe(true);
        regrown = true;
      }
      for (const end = next + adding; next < end; next++) {
        const p = made(next);
        book.add(p);
        held.set(p.seq, p);
      }
    }
    expect(during).toBeGreaterThan(5);
    expect(book.moved - moved).toBeGreaterThan(100); // the rounds after the first call moved decisions
    expect(book.size).toBe(held.size);
    expect(wrongOf(book, held.values())).toEqual([]);
    closeDue(book, held, T0 + next + 5_000);
    expect([book.size, book.slots]).toEqual([0, 1024]);
  });

  it("keeps a slot number good until the next removal, which may renumber it; the new one is found by id", () => {
    const { book, held } = filled(3 * CHUNK);
    closeDue(book, held, T0 + 2 * CHUNK + 1_000);
    expect(book.compactingNow).toBe(true);
    // The decisions in the highest slots: the ones a compaction moves.
    const top = [...held.values()].map((p) => ({ p, slot: found(book, p)[0]!.slot })).sort((a, b) => b.slot - a.slot).slice(0, 200);
    const newest = top.map((t) => t.p);
    const slots = top.map((t) => t.slot);
    for (let i = 3 * CHUNK; i < 3 * CHUNK + 1000; i++) book.add(made(i)); // adds move nothing
    expect(slots.map((slot) => described(book.pendingAt(slot)))).toEqual(newest.map(described));
    // Removal calls (closing nothing) compact until the book is dense: the top ones are renumbered.
    for (let k = 0; k < 200 && book.compactingNow; k++) book.closeDue(T0);
    const after = newest.map((p) => found(book, p)[0]!.slot);
    expect(after.filter((slot, k) => slot !== slots[k]!).length).toBeGreaterThan(100);
    // Marked by its new slot, the decision is rewarded, and no other.
    book.markRewarded(after[0]!);
    expect(found(book, newest[0]!)[0]!.rewarded).toBe(true);
    expect(newest.slice(1).filter((p) => found(book, p)[0]!.rewarded)).toEqual([]);
  });
});
