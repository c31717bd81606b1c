// The pending book's id table (issue 33): it doubles a few buckets at a time, so while a doubling
// runs an entry is in the old table or the new one. Checked against a Set over seeded runs with
// hashes that collide a lot (long probe runs, runs that wrap past the table's end), and directly:
// lookups and removals while old and new both hold entries. It halves the same way as entries go,
// and an entry can be repointed at another slot (the book moved its decision) in either table.
import { describe, expect, it } from "vitest";
import { seeded } from "../../bench/seeded.js";
import { IdTable } from "../../src/adaptive/id-table.js";
import { NO_SLOT } from "../../src/adaptive/pending-columns.js";

/** Slots with the hashes the test gives them (the book reads a slot's hash from its columns). */
class Hashes {
  readonly of: number[] = [];
  hashAt(slot: number): number {
    return this.of[slot]!;
  }
}

/** The inverse of the table's Fibonacci multiplier: imul(INVERSE, p) is a hash whose product is p. */
const INVERSE = 244_002_641;
/** A hash with a home in the first bucket (k small) or the last (the product's top bits all ones) at every table size. */
const first = (k: number) => Math.imul(INVERSE, k);
const last = (k: number) => Math.imul(INVERSE, -1 - k);

function slotsFor(table: IdTable, hash: number): number[] {
  const found: number[] = [];
  table.probe(hash);
  for (let slot = table.nextSlot(); slot !== NO_SLOT; slot = table.nextSlot()) found.push(slot);
  return found;
}

/** The held slots that a lookup of their hash does not find (none, when the table works). */
function missing(table: IdTable, hashes: Hashes, held: Iterable<number>): number[] {
  const out: number[] = [];
  for (const slot of held) if (!slotsFor(table, hashes.hashAt(slot)).includes(slot)) out.push(slot);
  return out;
}

function expectHeld(table: IdTable, hashes: Hashes, held: Iterable<number>): void {
  expect(missing(table, hashes, held)).toEqual([]);
}

/** A table filled to the point its next insertion doubles it. */
function fullTable(entries: number, hashOf: (slot: number) => number) {
  const table = new IdTable();
  const hashes = new Hashes();
  for (let slot = 0; slot < entries; slot++) {
    hashes.of[slot] = hashOf(slot);
    table.insert(slot, hashes.of[slot]!, hashes);
  }
  return { table, hashes };
}

describe("the id table", () => {
  it.each([
    ["spread", (r: () => number) => Math.floor(r() * 2 ** 32) | 0],
    // Many homes in the last bucket and the first: runs that wrap past the table's end.
    ["colliding", (r: () => number) => (r() < 0.3 ? last(Math.floor(r() * 64)) : r() < 0.5 ? first(Math.floor(r() * 64)) : Math.floor(r() * 64) * 0x01000193)],
  ])("agrees with a Set over a seeded run of insertions and removals across many doublings (%s hashes)", (_, hash) => {
    const random = seeded(33);
    const table = new IdTable();
    const hashes = new Hashes();
    const held: number[] = []; // in insertion order
    let next = 0;
    let doublings = 0;
    let checkedDuring = 0;
    for (let step = 0; step < 8_000; step++) {
      const before = table.doubling;
      if (held.length === 0 || random() < 0.65) {
        hashes.of[next] = hash(random);
        table.insert(next, hashes.of[next]!, hashes);
        held.push(next++);
      } else {
        const slot = held.splice(Math.floor(random() * Math.min(held.length, 64)), 1)[0]!; // among the oldest, as windows close
        table.remove(slot, hashes);
        expect(slotsFor(table, hashes.hashAt(slot))).not.toContain(slot);
      }
      if (!before && table.doubling) doublings++;
      if ((table.doubling && step % 5 === 0) || step % 101 === 0) {
        if (table.doubling) checkedDuring++;
        expect(missing(table, hashes, held), `step ${step}`).toEqual([]);
      }
    }
    expectHeld(table, hashes, held);
    expect(doublings).toBeGreaterThanOrEqual(6); // those of tables over 16 buckets: a smaller one is moved whole by one insertion
    expect(checkedDuring).toBeGreaterThan(50);
  });

  it("finds every entry while a doubling runs, whether moved to the new table yet or not, and each once", () => {
    const random = seeded(7);
    const { table, hashes } = fullTable(40_960, () => Math.floor(random() * 2 ** 32) | 0); // 5/8 of 65,536
    expect(table.doubling).toBe(false);
    hashes.of[40_960] = 12345;
    table.insert(40_960, 12345, hashes);
    // One insertion later the new table holds it and the first buckets moved; the old one the rest.
    expect(table.doubling).toBe(true);
    expect(table.size).toBe(65_536 + 131_072);
    for (let slot = 0; slot <= 40_960; slot++) {
      const found = slotsFor(table, hashes.hashAt(slot)).filter((s) => s === slot);
      expect(found, `slot ${slot}`).toEqual([slot]);
    }
    // No single insertion moves more than a few buckets: it takes thousands of them to finish.
    let insertions = 1;
    for (let slot = 40_961; table.doubling; slot++, insertions++) {
      hashes.of[slot] = Math.floor(random() * 2 ** 32) | 0;
      table.insert(slot, hashes.of[slot]!, hashes);
    }
    expect(insertions).toBe(65_536 / 16);
    expect(table.size).toBe(131_072);
    expectHeld(table, hashes, hashes.of.keys());
  });

  it("removes entries from the old table and from the new one while a doubling runs, the rest still found", () => {
    // Few distinct hashes: long runs in the old table, which a removal there must not break.
    const { table, hashes } = fullTable(1_280, (slot) => (slot % 40) * 0x01000193); // 5/8 of 2,048
    const extra = 1_280;
    hashes.of[extra] = hashes.of[3]!;
    table.insert(extra, hashes.of[extra]!, hashes);
    expect(table.doubling).toBe(true);
    const removed = [3, extra, 43, 1_279, 640, 41, 1];
    for (const slot of removed) table.remove(slot, hashes);
    expect(table.doubling).toBe(true);
    const held = [...hashes.of.keys()].filter((slot) => !removed.includes(slot));
    expectHeld(table, hashes, held);
    for (const slot of removed) expect(slotsFor(table, hashes.hashAt(slot))).not.toContain(slot);
    // Removals move buckets too: the doubling ends without another insertion.
    for (const slot of held.slice(0, 200)) table.remove(slot, hashes);
    expect(table.doubling).toBe(false);
    expectHeld(table, hashes, held.slice(200));
  });

  it("halves as entries are removed, a few buckets at a time, every entry found while it halves", () => {
    const random = seeded(11);
    // Colliding hashes among spread ones: long runs, which the halving must keep whole.
    const { table, hashes } = fullTable(40_000, (slot) => (slot % 4 === 0 ? (slot % 97) * 0x01000193 : Math.floor(random() * 2 ** 32) | 0));
    expect(table.size).toBe(65_536);
    const held = [...hashes.of.keys()];
    let halvings = 0;
    let removalsWhileHalving = 0;
    while (held.length > 100) {
      const at = Math.floor(random() * held.length);
      const slot = held[at]!;
      held[at] = held[held.length - 1]!;
      held.pop();
      const before = table.doubling;
      table.remove(slot, hashes);
      if (!before && table.doubling) {
        halvings++;
        // Just begun: the old table and one half its size both held.
        expect(table.size % 3).toBe(0);
        expectHeld(table, hashes, held);
      }
      if (table.doubling) {
        removalsWhileHalving++;
        if (removalsWhileHalving % 64 === 0) expectHeld(table, hashes, held);
      }
    }
    // 65,536 buckets down to 512 (100 entries are at least 3/16 of 512), each halving over S/16 removals.
    expect(halvings).toBe(7);
    expect(table.doubling).toBe(false);
    expect(table.size).toBe(512);
    expect(removalsWhileHalving).toBeGreaterThan(65_536 / 2 / 16);
    expectHeld(table, hashes, held);
  });

  it("repoints an entry at another slot, whether it is in the new table or the old one", () => {
    const { table, hashes } = fullTable(1_280, (slot) => (slot % 40) * 0x01000193); // 5/8 of 2,048
    hashes.of[1_280] = hashes.of[7]!;
    table.insert(1_280, hashes.of[1_280]!, hashes);
    expect(table.doubling).toBe(true);
    // Slot 0's bucket was among the first moved, the last slot's is still in the old table (or the other way round): both repointed.
    for (const [from, to] of [
      [0, 5_000],
      [1_279, 5_001],
      [1_280, 5_002],
    ] as const) {
      hashes.of[to] = hashes.of[from]!;
      table.repoint(from, to, hashes.of[from]!);
      expect(slotsFor(table, hashes.of[to]!)).toContain(to);
      expect(slotsFor(table, hashes.of[to]!)).not.toContain(from);
    }
    const held = [...hashes.of.keys()].filter((slot) => hashes.of[slot] !== undefined && ![0, 1_279, 1_280].includes(slot));
    expectHeld(table, hashes, held);
    for (const slot of held.slice(0, 300)) table.remove(slot, hashes);
    expect(table.doubling).toBe(false);
    expectHeld(table, hashes, held.slice(300));
  });
});
