// The typed face of the wasm engine, the part resolution needs: hashing, bucketing, allocation
// lookup and weighted picks. It validates arguments, writes strings as UTF-8 straight into the
// module's static buffers, calls one export and reads numbers back. Nothing here allocates in
// wasm memory; the JS side allocates only results the caller asked for. BatchBucketEngine
// (batch-engine.ts) adds hashing many units at once, Engine (engine.ts) randomness and the
// bandits; the client SDK carries only this class (about 2.5 KB gzipped less).
import { ABI_VERSION, BUFFER, type BufferName, type EngineExports } from "./abi.js";
import { type Unit, checkBucket, checkBucketCount, checkSalt, checkUnitInterval, checkWeights, unitString } from "./checks.js";
import type { LinearCapacity } from "./linear.js";
import {
  type BucketRange, type PackedSaltChunk, RangeTable, SaltSet, type SaltChunk, type TableCapacity, buildRangeTable, buildSaltSet, isBuiltTable,
} from "./tables.js";

const PREFIX_CACHE_ENTRIES = 4096;
export const encoder = new TextEncoder();

export class BucketEngine {
  /** Whether this module hashes batches four lanes at a time. */
  readonly simd: boolean;
  readonly capacity: TableCapacity & LinearCapacity & { readonly inputBytes: number; readonly maxSamples: number };
  protected readonly wasm: EngineExports;
  protected readonly at: Record<BufferName, number>;
  protected u8: Uint8Array;
  protected u32: Uint32Array;
  protected f64: Float64Array;
  private inputTails: Uint8Array[] = [];
  private readonly prefixes = new Map<string, Uint8Array>();
  protected loadedSalts: SaltChunk | null = null;
  private loadedRanges: RangeTable | null = null;

  constructor(exports: EngineExports) {
    const version = exports.abiVersion();
    if (version !== ABI_VERSION) {
      throw new Error(`vane engine ABI ${version} does not match the loader's ABI ${ABI_VERSION}; rebuild with npm run build`);
    }
    this.wasm = exports;
    this.simd = exports.simd() !== 0;
    const names = Object.keys(BUFFER) as BufferName[];
    this.at = Object.fromEntries(names.map((n) => [n, exports.bufferPointer(BUFFER[n])])) as Record<BufferName, number>;
    const bytes = (n: BufferName) => exports.bufferBytes(BUFFER[n]);
    this.capacity = {
      inputBytes: bytes("input"),
      saltBytes: bytes("salts"),
      maxItems: bytes("buckets") / 4,
      maxRanges: bytes("ranges") / 8,
      maxArms: bytes("armA") / 8,
      maxSamples: bytes("samples") / 8,
      maxDimension: bytes("context") / 8,
      linearValues: bytes("linear") / 8,
    };
    this.u8 = new Uint8Array(exports.memory.buffer);
    this.u32 = new Uint32Array(exports.memory.buffer);
    this.f64 = new Float64Array(exports.memory.buffer);
  }

  /**
   * Size of the module's linear memory. Constant: nothing in the engine allocates or grows it
   * (test/engine/memory.test.ts holds it to that), so the typed views made once stay valid.
   */
  get memoryBytes(): number {
    return this.wasm.memory.buffer.byteLength;
  }

  // ---- hashing ----

  sha256(bytes: Uint8Array): Uint8Array {
    if (!(bytes instanceof Uint8Array)) throw new TypeError("sha256 takes a Uint8Array");
    if (bytes.length <= this.capacity.inputBytes) {
      this.u8.set(bytes, this.at.input);
      this.wasm.sha256(bytes.length);
    } else {
      this.stream(bytes);
    }
    return this.u8.slice(this.at.digest, this.at.digest + 32);
  }

  /** sha256-v2: uint64_be(SHA-256(salt + "." + unit)[0..8]) mod bucketCount. */
  bucket(salt: string, unit: Unit, bucketCount: number): number {
    const s = checkSalt(salt);
    const u = unitString(unit);
    const n = checkBucketCount(bucketCount);
    const prefix = this.prefix(s);
    if (prefix.length < this.capacity.inputBytes) {
      this.u8.set(prefix, this.at.input);
      const written = this.encodeUnit(u, prefix.length);
      if (written >= 0) return this.wasm.bucket(prefix.length + written, n) >>> 0;
    }
    return this.streamedBucket(s, u, n);
  }

  /**
   * Prepares salts (e.g. a bundle's layers) for bucketSalts; with `bucketCounts`, each salt
   * carries its own bucket count (e.g. layers with 1000, adaptive arm keys with 1000000).
   */
  saltSet(salts: readonly string[], bucketCounts?: readonly number[]): SaltSet {
    return buildSaltSet(salts, this.capacity, bucketCounts);
  }

  /**
   * One unit against every salt of the set, in one call per chunk: result i is
   * bucket(salts[i], unit, n), n being `bucketCount`, or salt i's own count when the set has them.
   */
  bucketSalts(salts: SaltSet, unit: Unit, bucketCount?: number, out?: Uint32Array): Uint32Array {
    if (!(salts instanceof SaltSet) || !isBuiltTable(salts)) throw new TypeError("bucketSalts takes a SaltSet from engine.saltSet()");
    const u = unitString(unit);
    const own = salts.bucketCounts;
    if (own !== undefined && bucketCount !== undefined) throw new TypeError("this salt set carries its own bucket counts; pass none");
    const n = own === undefined ? checkBucketCount(bucketCount) : 0; // 0: each salt's own count
    const result = this.output(out, salts.size);
    for (const chunk of salts.chunks) {
      const written = "streamedSalt" in chunk ? -1 : this.encodeUnit(u, 0);
      if ("streamedSalt" in chunk || written < 0) {
        for (let i = chunk.start; i < chunk.start + chunk.count; i++) result[i] = this.streamedBucket(salts.salts[i]!, u, own?.[i] ?? n);
        continue;
      }
      this.loadSalts(chunk);
      this.wasm.bucketSalts(chunk.count, written, n);
      this.copyBuckets(result, chunk.start, chunk.count);
    }
    return result;
  }

  // ---- allocation ----

  /** Prepares lists of inclusive [first, last] ranges (one list per policy) for allocationIndex. */
  rangeTable(lists: readonly (readonly BucketRange[])[]): RangeTable {
    return buildRangeTable(lists, this.capacity);
  }

  /** Index, in the list's own order, of the range of list `list` that holds `bucket`, or -1. */
  allocationIndex(table: RangeTable, list: number, bucket: number): number {
    if (!(table instanceof RangeTable) || !isBuiltTable(table)) throw new TypeError("allocationIndex takes a RangeTable from engine.rangeTable()");
    const ranges = table.lists[list];
    if (ranges === undefined) throw new RangeError(`list must be an index from 0 to ${table.lists.length - 1}, got ${list}`);
    const b = checkBucket(bucket);
    if (this.loadedRanges !== table) {
      this.u32.set(table.pairs, this.at.ranges >>> 2);
      this.loadedRanges = table;
    }
    const i = this.wasm.allocationIndex(ranges.start, ranges.count, b);
    return i < 0 ? -1 : ranges.originalIndex[i]!;
  }

  /** The first index whose cumulative weight exceeds x in [0, 1); zero weights are never picked. */
  pickWeighted(weights: ArrayLike<number>, x: number): number {
    const count = checkWeights(weights, this.capacity.maxArms);
    checkUnitInterval("x", x);
    this.f64.set(weights, this.at.armA >>> 3);
    return this.wasm.pickWeighted(count, x);
  }

  /** Copies BUCKETS[0..count) to result[start..]; a loop, since a subarray would allocate per call. */
  protected copyBuckets(result: Uint32Array, start: number, count: number): void {
    const from = this.at.buckets >>> 2;
    for (let i = 0; i < count; i++) result[start + i] = this.u32[from + i]!;
  }

  protected output(out: Uint32Array | undefined, size: number): Uint32Array {
    if (out === undefined) return new Uint32Array(size);
    if (!(out instanceof Uint32Array) || out.length < size) throw new RangeError(`out must be a Uint32Array of at least ${size} entries`);
    return out;
  }

  /** "salt." as UTF-8, cached: a bundle has few salts and hashes them for every unit. */
  protected prefix(salt: string): Uint8Array {
    let bytes = this.prefixes.get(salt);
    if (bytes === undefined) {
      if (this.prefixes.size >= PREFIX_CACHE_ENTRIES) this.prefixes.clear();
      bytes = encoder.encode(`${salt}.`);
      this.prefixes.set(salt, bytes);
    }
    return bytes;
  }

  /** Writes the unit at INPUT + offset; its byte length, or -1 when it does not fit. */
  protected encodeUnit(unit: string, offset: number): number {
    const tail = this.inputTails[offset] ?? this.inputTail(offset);
    const { read, written } = encoder.encodeInto(unit, tail);
    return read === unit.length ? written : -1;
  }

  protected inputTail(offset: number): Uint8Array {
    const tail = this.u8.subarray(this.at.input + offset, this.at.input + this.capacity.inputBytes);
    if (offset < 1024) this.inputTails[offset] = tail; // prefixes are short; cache their tails
    return tail;
  }

  private loadSalts(chunk: PackedSaltChunk): void {
    if (this.loadedSalts === chunk) return;
    this.u8.set(chunk.bytes, this.at.salts);
    this.u32.set(chunk.offsets, this.at.offsets >>> 2);
    if (chunk.moduli) this.u32.set(chunk.moduli, this.at.moduli >>> 2);
    this.loadedSalts = chunk;
  }

  /** Messages longer than INPUT: SHA-256 in INPUT-sized chunks. */
  private stream(bytes: Uint8Array): void {
    this.wasm.sha256Init();
    for (let at = 0; at < bytes.length; at += this.capacity.inputBytes) {
      const chunk = bytes.subarray(at, at + this.capacity.inputBytes);
      this.u8.set(chunk, this.at.input);
      this.wasm.sha256Update(chunk.length);
    }
    this.wasm.sha256Final();
  }

  protected streamedBucket(salt: string, unit: string, bucketCount: number): number {
    this.stream(encoder.encode(`${salt}.${unit}`));
    return this.wasm.streamedBucket(bucketCount) >>> 0;
  }
}
