// Many units hashed against one salt in one engine call (the server's batch work and the
// benchmarks): kept out of BucketEngine so the client SDK, which hashes one unit at a time, does
// not carry it (~0.5 KB gzipped of vane/client).
import { BucketEngine, encoder } from "./bucket-engine.js";
import { type Unit, checkBucketCount, checkSalt, unitString } from "./checks.js";

export class BatchBucketEngine extends BucketEngine {
  /** Many units against one salt: result i is bucket(salt, units[i]). */
  bucketUnits(salt: string, units: readonly Unit[], bucketCount: number, out?: Uint32Array): Uint32Array {
    const s = checkSalt(salt);
    if (!Array.isArray(units)) throw new TypeError("units must be an array of strings or finite numbers");
    const n = checkBucketCount(bucketCount);
    const result = this.output(out, units.length);
    const prefix = this.prefix(s);
    if (prefix.length > this.capacity.saltBytes) {
      units.forEach((unit, i) => (result[i] = this.streamedBucket(s, unitString(unit), n)));
      return result;
    }
    this.u8.set(prefix, this.at.salts);
    this.loadedSalts = null;
    const { inputBytes, maxItems } = this.capacity;
    const chunk: string[] = [];
    for (let start = 0; start < units.length; start += chunk.length) {
      // As many units as surely fit if ASCII (one byte per char); always at least one.
      chunk.length = 0;
      let chars = 0;
      while (start + chunk.length < units.length && chunk.length < maxItems) {
        const unit = unitString(units[start + chunk.length]);
        if (chunk.length > 0 && chars + unit.length > inputBytes) break;
        chunk.push(unit);
        chars += unit.length;
      }
      if (!this.hashAsciiChunk(chunk, prefix.length, n)) this.hashUnitsOneByOne(chunk, { salt: s, bucketCount: n }, result.subarray(start));
      else this.copyBuckets(result, start, chunk.length);
    }
    return result;
  }

  /**
   * The common case in one encodeInto: the chunk joined. When every char took one byte (all
   * ASCII), the offsets are the strings' lengths. False, with nothing hashed, otherwise.
   */
  private hashAsciiChunk(chunk: readonly string[], prefixLen: number, bucketCount: number): boolean {
    const joined = chunk.length === 1 ? chunk[0]! : chunk.join("");
    if (joined.length > this.capacity.inputBytes) return false;
    const { read, written } = encoder.encodeInto(joined, this.inputTail(0));
    if (read !== joined.length || written !== joined.length) return false;
    const offsets = this.at.offsets >>> 2;
    let at = 0;
    for (let k = 0; k < chunk.length; k++) {
      this.u32[offsets + k] = at;
      at += chunk[k]!.length;
    }
    this.u32[offsets + chunk.length] = at;
    this.wasm.bucketUnits(chunk.length, prefixLen, bucketCount);
    return true;
  }

  /** Units with non-ASCII text: encoded one by one; one too long for INPUT is streamed alone. */
  private hashUnitsOneByOne(chunk: readonly string[], { salt, bucketCount }: { salt: string; bucketCount: number }, result: Uint32Array): void {
    const offsets = this.at.offsets >>> 2;
    const prefixLen = this.prefix(salt).length;
    let batchStart = 0, count = 0, used = 0;
    const flush = (next: number) => {
      if (count > 0) {
        this.u32[offsets + count] = used;
        this.wasm.bucketUnits(count, prefixLen, bucketCount);
        this.copyBuckets(result, batchStart, count);
      }
      batchStart = next;
      count = used = 0;
    };
    for (let k = 0; k < chunk.length; k++) {
      const unit = chunk[k]!;
      let written = this.encodeUnit(unit, used);
      if (written < 0) {
        flush(k);
        written = this.encodeUnit(unit, 0);
        if (written < 0) {
          result[k] = this.streamedBucket(salt, unit, bucketCount);
          batchStart = k + 1;
          continue;
        }
      }
      this.u32[offsets + count] = used;
      used += written;
      count++;
    }
    flush(chunk.length);
  }
}
