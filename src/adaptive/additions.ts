// The decisions a learning step reads for the first time, until the book holds them (learner.ts):
// a struct of arrays the learner reuses step after step, found by id through an open-addressing
// table of indices, so a decision on the hit path makes no object (issue 33: a `Pending` per
// decision, its entry in an array and in a Map were ~0.4 KiB of each resolve's allocation).
import { IdWords } from "./decision-id.js";
import type { PolicyRef } from "./pending.js";

/** No addition: an empty bucket, the end of a chain. */
export const NONE = -1;
const MIN_ROOM = 256;

export class Additions {
  /** Decisions added since `reset`, in log order: indices 0..count-1. */
  count = 0;
  seqs = new Float64Array(MIN_ROOM);
  closes = new Float64Array(MIN_ROOM);
  /** REWARDED and UNCOUNTED bits, as in the book. */
  flags = new Uint8Array(MIN_ROOM);
  /** The next addition with the same id, NONE at the chain's end. */
  private sameId = new Int32Array(MIN_ROOM);
  /** The last addition of a chain, kept at its first: chains stay in log order. */
  private last = new Int32Array(MIN_ROOM);
  readonly ids: string[] = [];
  readonly refs: PolicyRef[] = [];
  readonly armKeys: string[] = [];
  readonly entities: string[] = [];
  readonly features: (Float64Array | undefined)[] = [];
  /** First addition per id, by the id's hash; at most half full. */
  private buckets = new Int32Array(MIN_ROOM * 2).fill(NONE);
  private readonly key = new IdWords();

  /** Empty again, keeping the room (a step's strings stay referenced until overwritten: at most a page's). */
  reset(): void {
    if (this.count === 0) return;
    this.count = 0;
    this.buckets.fill(NONE);
    this.features.fill(undefined);
  }

  add(seq: number, id: string, ref: PolicyRef, armKey: string, entity: string, features: Float64Array | undefined, closesAt: number): void {
    if (this.count === this.seqs.length) this.grow();
    const i = this.count++;
    this.seqs[i] = seq;
    this.closes[i] = closesAt;
    this.flags[i] = 0;
    this.sameId[i] = NONE;
    this.ids[i] = id;
    this.refs[i] = ref;
    this.armKeys[i] = armKey;
    this.entities[i] = entity;
    this.features[i] = features;
    const b = this.bucketOf(id); // one probe: the id's chain, or where it starts one
    const first = this.buckets[b]!;
    if (first === NONE) {
      this.buckets[b] = i;
      this.last[i] = i;
    } else {
      this.sameId[this.last[first]!] = i;
      this.last[first] = i;
    }
  }

  /** The first addition with this id, NONE when there is none; `next` walks the rest in log order. */
  first(id: string): number {
    return this.buckets[this.bucketOf(id)]!;
  }

  next(i: number): number {
    return this.sameId[i]!;
  }

  decidedAt(i: number): number {
    return this.closes[i]! - this.refs[i]!.windowMs;
  }

  /** The bucket holding the id's first addition, or the empty one where its chain would start. */
  private bucketOf(id: string): number {
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    this.key.read(id);
    for (let b = this.key.hash() & mask; ; b = (b + 1) & mask) {
      const i = buckets[b]!;
      if (i === NONE || this.ids[i] === id) return b;
    }
  }

  /** Twice the room; the table built again from the chains' first additions. */
  private grow(): void {
    const room = this.seqs.length * 2;
    this.seqs = grown(this.seqs, new Float64Array(room));
    this.closes = grown(this.closes, new Float64Array(room));
    this.flags = grown(this.flags, new Uint8Array(room));
    this.sameId = grown(this.sameId, new Int32Array(room));
    this.last = grown(this.last, new Int32Array(room));
    const old = this.buckets;
    this.buckets = new Int32Array(room * 2).fill(NONE);
    for (const i of old) if (i !== NONE) this.buckets[this.bucketOf(this.ids[i]!)] = i; // ids are distinct: each finds an empty bucket
  }
}

function grown<T extends Float64Array | Uint8Array | Int32Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}
