// The pending book's id table (issue 33): it doubles a few buckets at a time, so while a doubling
// runs an entry is in the old table or the new one. Checked against a Set over seeded runs with
// hashes that collide a lot (long probe runs, runs that wrap past the table's end), and directly:
// lookups and removals while old and new both hold entries.
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
});
