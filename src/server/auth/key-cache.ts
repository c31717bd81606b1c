// Key lookups by secret hash, held briefly in memory: every request authenticates, and a store
// round trip per request would cost more than the resolution itself. Revocation and rotation
// written by the CLI are seen within `ttlMs`. When the store fails, the last good record keeps
// serving for `staleMs` so a store blip does not lock every client out.
import type { KeyRecord, KeyStore } from "../../store/types.js";
import type { Clock } from "../clock.js";
import { constantTimeEqual } from "./api-key.js";

interface CachedKey {
  readonly record: KeyRecord | undefined;
  readonly fetchedAt: number;
}

export interface KeyCacheOptions {
  readonly keys: KeyStore;
  readonly clock: Clock;
  readonly ttlMs: number;
  readonly staleMs: number;
  /** Entries kept at most; the oldest go first. */
  readonly maxEntries?: number;
}

export class KeyStoreUnavailable extends Error {}

export class KeyCache {
  private readonly entries = new Map<string, CachedKey>();
  private readonly maxEntries: number;

  constructor(private readonly options: KeyCacheOptions) {
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  /**
   * The key with this secret hash, undefined when unknown; KeyStoreUnavailable when it cannot tell.
   * A record read within `ttlMs` is returned as it is, not in a promise: the hit path allocates nothing.
   * A record's hash is compared with the one asked for once, as the store gives it, not per request.
   */
  lookup(hash: string): KeyRecord | undefined | Promise<KeyRecord | undefined> {
    const now = this.options.clock.now();
    const cached = this.entries.get(hash);
    if (cached !== undefined && now - cached.fetchedAt < this.options.ttlMs) return cached.record;
    return this.fetch(hash, now, cached);
  }

  private async fetch(hash: string, now: number, cached: CachedKey | undefined): Promise<KeyRecord | undefined> {
    try {
      const given = await this.options.keys.byHash(hash);
      // Only the record with this very hash answers for it, whatever the store matched on.
      const record = given !== undefined && constantTimeEqual(given.secretHash, hash) ? given : undefined;
      this.remember(hash, { record, fetchedAt: now });
      return record;
    } catch (error) {
      if (cached !== undefined && now - cached.fetchedAt < this.options.staleMs) return cached.record;
      throw new KeyStoreUnavailable("key store unavailable", { cause: error });
    }
  }

  /** Another server changed this key (a revocation, a rotation): the next request reads it afresh. */
  forget(hash: string): void {
    this.entries.delete(hash);
  }

  private remember(hash: string, entry: CachedKey): void {
    this.entries.delete(hash);
    this.entries.set(hash, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }
}
