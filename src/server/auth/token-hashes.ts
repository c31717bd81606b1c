// The SHA-256 of each recently seen API key string, so a request with a known key costs a map
// lookup and a constant-time compare instead of a hash (a profile's share of every request). The
// map is keyed by the key's first characters, never used alone: a hit counts only when the whole
// string equals the remembered one, compared in constant time. Bounded; oldest first out.
import { constantTimeEqual, keyKind, secretHash, type Sha256 } from "./api-key.js";

/** "vane_sk_" and 16 characters of the secret (~95 bits): distinct keys rarely share one. */
const PREFIX_CHARS = 24;

interface Remembered {
  readonly token: string;
  readonly hash: string;
}

export class TokenHashes {
  private readonly entries = new Map<string, Remembered>();

  constructor(
    private readonly sha256: Sha256,
    private readonly maxEntries = 10_000,
  ) {}

  /** The key string's SHA-256 (hex), or undefined when the string is not a key. */
  hashOf(token: string): string | undefined {
    const prefix = token.slice(0, PREFIX_CHARS);
    const known = this.entries.get(prefix);
    if (known !== undefined && constantTimeEqual(known.token, token)) return known.hash;
    if (keyKind(token) === undefined) return undefined;
    const hash = secretHash(token, this.sha256);
    this.entries.delete(prefix);
    this.entries.set(prefix, { token, hash });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    return hash;
  }
}
