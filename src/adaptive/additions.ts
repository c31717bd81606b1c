// The decisions a learning step reads for the first time, until the book holds them (learner.ts):
// a struct of arrays the learner reuses step after step, found by id through an open-addressing
// table of indices, so a decision on the hit path makes no object (issue 33: a `Pending` per
// decision, its entry in an array and in a Map were ~0.4 KiB of each resolve's allocation).
// An addition keeps its id's words, so the book takes them without parsing the id again
// (loadWords), and the learner probes once per decision event for all its layers (probe, addAt).
import { IdWords, mixWords } from "./decision-id.js";
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
  /** Each addition's id as IdWords read it: four words, and whether they hash a text. */
  private words = new Int32Array(MIN_ROOM * 4);
  private texts = new Uint8Array(MIN_ROOM);
  readonly ids: string[] = [];
  readonly refs: PolicyRef[] = [];
  readonly armKeys: string[] = [];
  readonly entities: string[] = [];
  readonly features: (Float64Array | undefined)[] = [];
  /** First addition per id, by the id's hash; at most half full. */
  private buckets = new Int32Array(MIN_ROOM * 2).fill(NONE);

  /** `key` may be shared with the pending book: an id read here is not parsed again there. */
  constructor(private readonly key = new IdWords()) {}

  /** Empty again, keeping the room (a step's strings stay referenced until overwritten: at most a page's). */
  reset(): void {
    if (this.count === 0) return;
    this.count = 0;
    this.buckets.fill(NONE);
    this.features.fill(undefined);
  }

  add(seq: number, id: string, ref: PolicyRef, armKey: string, entity: string, features: Float64Array | undefined, closesAt: number): void {
    this.addAt(this.bucketOf(id), seq, id, ref, armKey, entity, features, closesAt);
  }

  /** The bucket of an id (from `probe`): its chain's first addition (`at`), or where its chain would start. */
  probe(id: string): number {
    return this.bucketOf(id);
  }

  /** The first addition of the chain in bucket `b` (from `probe`), NONE when there is none. */
  at(b: number): number {
    return this.buckets[b]!;
  }

  /**
   * `add` into the bucket `probe` gave for the id, with no probe of its own; returns the id's
   * bucket for the next addition of the same id (it moves only when the table grows).
   */
  addAt(b: number, seq: number, id: string, ref: PolicyRef, armKey: string, entity: string, features: Float64Array | undefined, closesAt: number): number {
    if (this.count === this.seqs.length) {
      this.grow();
      b = this.bucketOf(id); // the key still holds the id: no parse
    }
    const key = this.key;
    key.read(id); // the words of `probe`'s read, unless the shared key read another id since
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
    const w = i * 4;
    this.words[w] = key.w0;
    this.words[w + 1] = key.w1;
    this.words[w + 2] = key.w2;
    this.words[w + 3] = key.w3;
    this.texts[i] = key.text ? 1 : 0;
    const first = this.buckets[b]!;
    if (first === NONE) {
      this.buckets[b] = i;
      this.last[i] = i;
    } else {
      this.sameId[this.last[first]!] = i;
      this.last[first] = i;
    }
    return b;
  }

  /** Sets the key to addition i's id, as its read left it: the book's add then parses nothing. */
  loadWords(i: number): void {
    const w = i * 4;
    const words = this.words;
    this.key.load(this.ids[i]!, words[w]!, words[w + 1]!, words[w + 2]!, words[w + 3]!, this.texts[i] === 1);
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
    this.words = grown(this.words, new Int32Array(room * 4));
    this.texts = grown(this.texts, new Uint8Array(room));
    const old = this.buckets;
    this.buckets = new Int32Array(room * 2).fill(NONE);
    for (const i of old) if (i !== NONE) this.buckets[this.emptyBucket(i)] = i;
  }

  /** The empty bucket where addition i's chain goes, from the words it kept (no parse): the chains' ids are distinct. */
  private emptyBucket(i: number): number {
    const buckets = this.buckets;
    const mask = buckets.length - 1;
    const w = this.words;
    let b = mixWords(w[4 * i]!, w[4 * i + 1]!, w[4 * i + 2]!, w[4 * i + 3]!) & mask;
    while (buckets[b] !== NONE) b = (b + 1) & mask;
    return b;
  }
}

function grown<T extends Float64Array | Uint8Array | Int32Array>(from: T, to: T): T {
  to.set(from as never);
  return to;
}
