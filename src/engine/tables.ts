// Tables prepared once and reused across calls: the salts a resolve hashes one unit against, and
// the bucket ranges of many policies. The engine copies a table into wasm memory only when it
// differs from the one already there, so a compiled bundle pays for the copy once.
import { MAX_BUCKET_COUNT, checkBucketCount, checkSalt } from "./checks.js";

/**
 * Marks tables the build functions made, and only those: the engine trusts their sizes (they
 * fit its buffers), so a hand-made look-alike must not get in. A module-private symbol rather
 * than a WeakSet: the check runs on every lookup.
 */
const BUILT = Symbol("vane.builtTable");

export function isBuiltTable(table: unknown): boolean {
  return (table as { [BUILT]?: true } | null)?.[BUILT] === true;
}

export function markBuilt<T extends object>(table: T): T {
  Object.defineProperty(table, BUILT, { value: true });
  return table;
}

export interface TableCapacity {
  readonly saltBytes: number;
  readonly maxItems: number;
  readonly maxRanges: number;
}

/**
 * Consecutive salts packed as "salt." prefixes (offsets[i]..offsets[i+1] in bytes), or one salt
 * too long for the salt buffer, which is hashed by streaming instead.
 */
export interface PackedSaltChunk {
  readonly start: number;
  readonly count: number;
  readonly bytes: Uint8Array;
  readonly offsets: Uint32Array;
  /** The chunk's per-salt bucket counts, when the set has them. */
  readonly moduli: Uint32Array | undefined;
}

export type SaltChunk = PackedSaltChunk | { readonly start: number; readonly count: 1; readonly streamedSalt: string };

export class SaltSet {
  constructor(
    readonly salts: readonly string[],
    readonly chunks: readonly SaltChunk[],
    /** A bucket count per salt, or undefined when the caller gives one count per call. */
    readonly bucketCounts: Uint32Array | undefined,
  ) {}

  get size(): number {
    return this.salts.length;
  }
}

const encoder = new TextEncoder();

export function buildSaltSet(salts: readonly string[], capacity: TableCapacity, bucketCounts?: readonly number[]): SaltSet {
  if (!Array.isArray(salts)) throw new TypeError("salts must be an array of strings");
  const moduli = bucketCounts === undefined ? undefined : checkBucketCounts(bucketCounts, salts.length);
  const chunks: SaltChunk[] = [];
  let pending: Uint8Array[] = [];
  let pendingStart = 0;
  let pendingBytes = 0;
  const flush = (next: number) => {
    if (pending.length > 0) chunks.push(packChunk(pendingStart, pending, pendingBytes, moduli?.subarray(pendingStart, pendingStart + pending.length)));
    pending = [];
    pendingBytes = 0;
    pendingStart = next;
  };
  salts.forEach((salt, i) => {
    const prefix = encoder.encode(`${checkSalt(salt)}.`);
    if (prefix.length > capacity.saltBytes) {
      flush(i);
      chunks.push({ start: i, count: 1, streamedSalt: salt });
      pendingStart = i + 1;
      return;
    }
    if (pendingBytes + prefix.length > capacity.saltBytes || pending.length === capacity.maxItems) flush(i);
    pending.push(prefix);
    pendingBytes += prefix.length;
  });
  flush(salts.length);
  return markBuilt(new SaltSet([...salts], chunks, moduli));
}

function checkBucketCounts(bucketCounts: readonly number[], saltCount: number): Uint32Array {
  if (!Array.isArray(bucketCounts) || bucketCounts.length !== saltCount) {
    throw new RangeError(`bucketCounts must be an array with one count per salt (${saltCount})`);
  }
  return Uint32Array.from(bucketCounts, (n) => checkBucketCount(n));
}

function packChunk(start: number, prefixes: readonly Uint8Array[], byteLength: number, moduli: Uint32Array | undefined): PackedSaltChunk {
  const bytes = new Uint8Array(byteLength);
  const offsets = new Uint32Array(prefixes.length + 1);
  let at = 0;
  prefixes.forEach((prefix, i) => {
    offsets[i] = at;
    bytes.set(prefix, at);
    at += prefix.length;
  });
  offsets[prefixes.length] = at;
  return { start, count: prefixes.length, bytes, offsets, moduli };
}

/** One policy's ranges inside a RangeTable: sorted pairs from `start`, and their caller order. */
export interface RangeList {
  readonly start: number;
  readonly count: number;
  readonly originalIndex: Int32Array;
}

/** Many lists of inclusive [first, last] bucket ranges, each sorted, packed side by side. */
export class RangeTable {
  constructor(
    readonly pairs: Uint32Array,
    readonly lists: readonly RangeList[],
  ) {}
}

export type BucketRange = readonly [first: number, last: number];

export function buildRangeTable(lists: readonly (readonly BucketRange[])[], capacity: TableCapacity): RangeTable {
  if (!Array.isArray(lists)) throw new TypeError("range lists must be an array of arrays of [first, last]");
  const total = lists.reduce((n, list) => n + (Array.isArray(list) ? list.length : 0), 0);
  if (total > capacity.maxRanges) {
    throw new RangeError(`a range table holds at most ${capacity.maxRanges} ranges, got ${total}`);
  }
  const pairs = new Uint32Array(total * 2);
  const packed: RangeList[] = [];
  let start = 0;
  lists.forEach((list, l) => {
    const sorted = sortedRanges(list, l);
    sorted.forEach(([first, last], i) => {
      pairs[(start + i) * 2] = first;
      pairs[(start + i) * 2 + 1] = last;
    });
    packed.push({ start, count: sorted.length, originalIndex: Int32Array.from(sorted, (r) => r[2]) });
    start += sorted.length;
  });
  return markBuilt(new RangeTable(pairs, packed));
}

function sortedRanges(list: unknown, l: number): [number, number, number][] {
  if (!Array.isArray(list)) throw new TypeError(`ranges[${l}] must be an array of [first, last]`);
  const ranges = list.map((range: unknown, i): [number, number, number] => {
    const ok =
      Array.isArray(range) && range.length === 2 && range.every((b) => Number.isInteger(b) && b >= 0 && b <= MAX_BUCKET_COUNT);
    if (!ok || range[0] > range[1]) {
      throw new RangeError(`ranges[${l}][${i}] must be [first, last] with integers 0 <= first <= last`);
    }
    return [range[0], range[1], i];
  });
  ranges.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < ranges.length; i++) {
    const [prev, cur] = [ranges[i - 1]!, ranges[i]!];
    if (cur[0] <= prev[1]) throw new RangeError(`ranges[${l}][${cur[2]}] overlaps ranges[${l}][${prev[2]}]`);
  }
  return ranges;
}
