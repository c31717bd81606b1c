// The compact pending book (issue 33: typed columns, an id table, slot queues) against a reference
// that holds each pending decision as an object in a Map, over seeded random sequences of what the
// learner does: decisions in log order (UUIDs, clients' own ids, repeats, one or two layers,
// per-entity and contextual policies, two window lengths), rewards, windows closing, the oldest
// spilled to a store and looked up there, and restarts that rebuild memory from what survives.
import { describe, expect, it } from "vitest";
import { seeded } from "../../bench/seeded.js";
import { Pending, PendingBook, type PolicyRef, REWARDED, UNCOUNTED } from "../../src/adaptive/pending.js";
import { uuidv7 } from "../../src/ids/uuidv7.js";

const T0 = Date.parse("2026-11-27T00:00:00.000Z");

function ref(policyId: string, windowMs: number, projectId = "proj"): PolicyRef {
  return { orgId: "org", projectId, env: "production", policyId, rewardEvent: "win", windowMs, stateKey: `${projectId}/production/${policyId}` };
}

/** Thompson (short and long windows), per entity, contextual d = 3 and d = 5, another project's. */
const REFS = [ref("short", 1_000), ref("long", 5_000), ref("entity", 5_000), ref("ctx3", 1_000), ref("ctx5", 5_000), ref("short", 1_000, "other")];

/** What a pending decision says, to compare (a slot number is the book's own business). */
function described(p: Pending): unknown[] {
  return [p.seq, p.decisionId, p.ref, p.armKey, p.entity, p.features && Array.from(p.features), p.closesAt, p.flags, p.decidedAt, p.rewarded];
}

const sortedDescriptions = (found: readonly Pending[] | undefined) =>
  found?.map(described).sort((a, b) => (a[0] as number) - (b[0] as number) || String(a[2] && (a[2] as PolicyRef).stateKey).localeCompare(String(b[2] && (b[2] as PolicyRef).stateKey)));

/** The reference: the book as it was before issue 33, objects in a Map and per-window arrays. */
class ReferenceBook {
  readonly byId = new Map<string, Pending[]>();
  readonly queues = new Map<number, Pending[]>();

  get size(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  add(p: Pending): void {
    this.byId.set(p.decisionId, [...(this.byId.get(p.decisionId) ?? []), p]);
    const queue = this.queues.get(p.ref.windowMs) ?? [];
    this.queues.set(p.ref.windowMs, queue);
    queue.push(p);
  }

  of(id: string): Pending[] | undefined {
    return this.byId.get(id);
  }

  oldestSeq(): number | undefined {
    const heads = [...this.queues.values()].filter((q) => q.length > 0).map((q) => q[0]!.seq);
    return heads.length === 0 ? undefined : Math.min(...heads);
  }

  oldest(count: number, throughSeq: number, max = Number.POSITIVE_INFINITY): Pending[] {
    const cursors = new Map<Pending[], number>();
    const out: Pending[] = [];
    for (;;) {
      let best: Pending[] | undefined;
      for (const queue of this.queues.values()) {
        const next = queue[cursors.get(queue) ?? 0];
        if (next && (!best || next.seq < best[cursors.get(best) ?? 0]!.seq)) best = queue;
      }
      if (!best) return out;
      const next = best[cursors.get(best) ?? 0]!;
      if (next.seq !== out[out.length - 1]?.seq && out.length >= count && (next.seq > throughSeq || out.length >= max)) return out;
      out.push(next);
      cursors.set(best, (cursors.get(best) ?? 0) + 1);
    }
  }

  remove(p: Pending): void {
    const queue = this.queues.get(p.ref.windowMs)!;
    queue.splice(queue.indexOf(p), 1);
    const rest = this.byId.get(p.decisionId)!.filter((q) => q !== p);
    if (rest.length === 0) this.byId.delete(p.decisionId);
    else this.byId.set(p.decisionId, rest);
  }

  closeDue(nowMs: number): number {
    let unrewarded = 0;
    for (const queue of this.queues.values()) {
      while (queue.length > 0 && queue[0]!.closesAt <= nowMs) {
        const p = queue[0]!;
        this.remove(p);
        if (!p.rewarded) unrewarded++;
      }
    }
    return unrewarded;
  }

  /** Everything held, in log order: what a restart reads back from the log. */
  inLogOrder(): Pending[] {
    return this.oldest(this.size, Number.POSITIVE_INFINITY);
  }
}

/** A seeded run of `steps` operations on both books; the store of spilled decisions is a Map. */
function run(seed: number, steps: number): { peak: number; shrinks: number; spilled: number; rewarded: number; restarts: number } {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  let book = new PendingBook();
  const reference = new ReferenceBook();
  const stored = new Map<string, unknown[][]>();
  const ids: string[] = [];
  let seq = 0;
  let now = T0;
  let spilled = 0;
  let rewarded = 0;
  let restarts = 0;
  let peak = 0;
  let shrinks = 0;
  // Phases of 2,000 steps: grow past the book's first columns, let most close (it compacts), grow again.
  const decideShare = (step: number) => (Math.floor(step / 2000) % 2 === 0 ? 0.8 : 0.02);

  const check = (id: string) => {
    const found = book.of(id);
    expect(sortedDescriptions(found), `of(${id}) at seq ${seq}`).toEqual(sortedDescriptions(reference.of(id)));
    return found;
  };

  const decide = () => {
    seq++;
    now += Math.floor(random() * 2);
    const kind = random();
    // Mostly the server's UUIDs; some clients' own ids; some uppercase UUIDs (another id); some repeats.
    const id =
      kind < 0.08 && ids.length > 0
        ? pick(ids)
        : kind < 0.14
          ? `client-${Math.floor(random() * 1e6)}`
          : kind < 0.17 && ids.length > 0
            ? pick(ids).toUpperCase()
            : uuidv7(now);
    ids.push(id);
    const layers = random() < 0.5 ? 1 : 2;
    const first = Math.floor(random() * REFS.length);
    for (let layer = 0; layer < layers; layer++) {
      const r = REFS[(first + layer * 3) % REFS.length]!;
      const dimension = r.policyId === "ctx3" ? 3 : r.policyId === "ctx5" ? 5 : 0;
      const features = dimension > 0 ? Float64Array.from({ length: dimension }, () => Math.round(random() * 100) / 10) : undefined;
      const entity = r.policyId === "entity" ? `account-${Math.floor(random() * 50)}` : "";
      const flags = random() < 0.05 ? UNCOUNTED : 0;
      const made = new Pending(seq, id, r, `arm-${Math.floor(random() * 4)}`, entity, features, now + r.windowMs, flags);
      // The book gets its own copy of the context: it must not keep the caller's array.
      book.add(new Pending(made.seq, made.decisionId, made.ref, made.armKey, made.entity, features && Float64Array.from(features), made.closesAt, made.flags));
      reference.add(made);
    }
  };

  const reward = () => {
    const id = random() < 0.1 || ids.length === 0 ? uuidv7(now) : pick(ids);
    const found = check(id);
    if (found === undefined) {
      // Spilled or closed: the store still answers for a spilled one.
      if (stored.has(id)) expect(stored.get(id)!.length).toBeGreaterThan(0);
      return;
    }
    const target = pick(found);
    if (target.rewarded) return;
    book.markRewarded(target.slot);
    const same = reference.of(id)!.find((q) => q.seq === target.seq && q.ref === target.ref)!;
    same.flags |= REWARDED;
    rewarded++;
  };

  const spill = () => {
    const count = Math.floor(random() * 20);
    const through = seq - 500 - Math.floor(random() * 2000); // mostly before the oldest held: the bound's excess decides
    const out = book.oldest(count, through, 60);
    const expected = reference.oldest(count, through, 60);
    // The layers of one event may come in either order (queues are visited in the order they were made).
    expect(sortedDescriptions(out.map((slot) => book.pendingAt(slot)))).toEqual(sortedDescriptions(expected));
    for (const slot of out) {
      const p = book.pendingAt(slot);
      stored.set(p.decisionId, [...(stored.get(p.decisionId) ?? []), described(p)]);
    }
    book.removeOldest(out);
    for (const p of expected) reference.remove(p);
    spilled += out.length;
    // Looked up after the spill: gone from memory, found in the store.
    for (const p of expected.slice(0, 5)) {
      check(p.decisionId);
      expect(stored.get(p.decisionId)).toContainEqual(described(p));
    }
  };

  const restart = () => {
    book = new PendingBook();
    slots = book.slots;
    for (const p of reference.inLogOrder()) book.add(new Pending(p.seq, p.decisionId, p.ref, p.armKey, p.entity, p.features, p.closesAt, p.flags));
    restarts++;
  };

  let slots = book.slots;
  for (let step = 0; step < steps; step++) {
    const op = random();
    if (op < decideShare(step)) decide();
    else if (op < 0.95) reward();
    else if (op < 0.975) {
      now += Math.floor(random() * 100);
      expect(book.closeDue(now)).toBe(reference.closeDue(now));
    } else if (op < 0.999) spill();
    else restart();
    expect(book.size).toBe(reference.size);
    expect(book.oldestSeq()).toBe(reference.oldestSeq());
    peak = Math.max(peak, book.size);
    if (book.slots < slots) shrinks++;
    slots = book.slots;
  }
  for (const id of ids) check(id);
  return { peak, shrinks, spilled, rewarded, restarts };
}

describe("the pending book, against a Map of objects", () => {
  it.each([1, 2, 3, 4])("agrees over a seeded run of decisions, rewards, closes, spills and restarts (seed %i)", (seed) => {
    const outcome = run(seed, 12_000);
    // The run exercised what it says: the columns grew past their first 1,024 slots and were compacted, things spilled, were rewarded, restarted.
    expect(outcome.peak).toBeGreaterThan(1024);
    expect(outcome.shrinks).toBeGreaterThan(0);
    expect(outcome.spilled).toBeGreaterThan(100);
    expect(outcome.rewarded).toBeGreaterThan(100);
    expect(outcome.restarts).toBeGreaterThan(0);
  });

  it("holds a million-scale load in typed columns, then gives the memory back as windows close", () => {
    const book = new PendingBook();
    const r = REFS[0]!;
    const ids = Array.from({ length: 50_000 }, (_, i) => uuidv7(T0 + i));
    ids.forEach((id, i) => book.add(new Pending(i + 1, id, r, "arm-0", "", undefined, T0 + i + r.windowMs, 0)));
    expect(book.of(ids[12_345]!)?.map((p) => p.seq)).toEqual([12_346]);
    // A first chunk doubled from 1,024 slots to 16 Ki, then whole chunks: 4 of 16 Ki; the id table at most 5/8 full.
    expect(book.slots).toBe(65_536);
    expect(book.buckets).toBe(131_072);
    expect(book.closeDue(T0 + 49_000 + r.windowMs)).toBe(49_001);
    expect(book.size).toBe(999);
    expect(book.slots).toBe(2048);
    // Every survivor still found by its id after the columns were compacted.
    for (let i = 49_001; i < 50_000; i++) expect(book.of(ids[i]!)?.[0]?.seq).toBe(i + 1);
    expect(book.of(ids[10]!)).toBeUndefined();
  });

  it("prints a UUID id back as it came, and keeps another text as it is", () => {
    const book = new PendingBook();
    const r = REFS[0]!;
    const ids = [uuidv7(T0), "0190f1e2-3a4b-7c5d-8e6f-a1b2c3d4e5f6", "0190F1E2-3A4B-7C5D-8E6F-A1B2C3D4E5F6", "not-a-uuid", ""];
    ids.forEach((id, i) => book.add(new Pending(i + 1, id, r, "arm-0", "", undefined, T0 + r.windowMs, 0)));
    expect(book.oldest(ids.length, Number.POSITIVE_INFINITY).map((slot) => book.pendingAt(slot).decisionId)).toEqual(ids);
    for (const [i, id] of ids.entries()) expect(book.of(id)?.map((p) => p.seq)).toEqual([i + 1]);
  });

  it("keeps a Thompson decision in 29 bytes a slot: seq and close time in 4 bytes each", () => {
    const book = new PendingBook();
    const r = REFS[0]!;
    for (let i = 0; i < 3_000; i++) book.add(new Pending(4_000_000_000 + i, uuidv7(T0 + i), r, "arm-0", "", undefined, T0 + i + r.windowMs, 0));
    // 16 (id) + 4 (seq) + 4 (close) + 4 (policy and arm) + 1 (flags); 37 with 8-byte seqs and times. The id table apart.
    expect(book.bytesPerSlot).toBe(29);
  });

  it("widens a column for good when a seq passes 2^32 or a close time lies ~24 days from the first, every value kept", () => {
    const book = new PendingBook();
    const r = REFS[1]!;
    const DAY = 86_400_000;
    // Narrow values first, then a seq past 2^32, then close times 40 and 60 days on, a fractional one, and one before the first.
    const made = [
      [1, T0],
      [2 ** 32 - 1, T0 + 1],
      [2 ** 32 + 5, T0 + 2],
      [2 ** 40, T0 + 40 * DAY],
      [2 ** 40 + 1, T0 + 60 * DAY + 0.5],
      [2 ** 40 + 2, T0 - 30 * DAY],
    ].map(([seq, closesAt], i) => new Pending(seq!, uuidv7(T0 + i), r, "arm-1", "", undefined, closesAt!, 0));
    for (const p of made) book.add(p);
    expect(book.bytesPerSlot).toBe(37);
    // Enough more to grow the columns twice over, in their wide form.
    for (let i = 0; i < 3_000; i++) book.add(new Pending(2 ** 40 + 10 + i, uuidv7(T0 + 10 + i), r, "arm-1", "", undefined, T0 + 61 * DAY, 0));
    for (const p of made) expect(book.of(p.decisionId)?.map(described)).toEqual([described(p)]);
    expect(book.oldest(2, 0).map((slot) => book.seqAt(slot))).toEqual([1, 2 ** 32 - 1]);
    // The three first; the one 30 days before waits in log order behind the one 40 days on.
    expect(book.closeDue(T0 + 2)).toBe(3);
    expect(book.of(made[0]!.decisionId)).toBeUndefined();
  });
});
