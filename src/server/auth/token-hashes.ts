// The SHA-256 of each recently seen API key string, so a request with a known key costs a map
// lookup and a constant-time compare instead of a hash (a profile's share of every request). The
// map is keyed by the key's first characters, never used alone: a hit counts only when the whole
// string equals the remembered one, compared in constant time. Bounded; oldest first out.
import { constantTimeEqual, keyKind, secretHash, type Sha256 } from "./api-key.js";

/** "vane_sk_" and 16 characters of the secret (~95 bits): distinct keys rarely share one. */
const PREFIX_CHARS = 24;
/** Authorization headers remembered whole, one per slot (a power of two). */
const HEADER_SLOTS = 256;

interface Remembered {
  readonly token: string;
  readonly hash: string;
}

export class TokenHashes {
  private readonly entries = new Map<string, Remembered>();
  /**
   * Whole Authorization headers that held a valid key, each in the slot its last two characters
   * pick: a request that repeats one is answered without a parse, a slice or a map key (nothing
   * allocated), and a hit again counts only when the whole header is equal, in constant time.
   */
  private readonly headers: (Remembered | undefined)[] = new Array<Remembered | undefined>(HEADER_SLOTS).fill(undefined);

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

  /** The hash of the key in `header`, when this exact header was remembered; undefined otherwise. */
  ofHeader(header: string): string | undefined {
    const known = this.headers[headerSlot(header)];
    return known !== undefined && constantTimeEqual(known.token, header) ? known.hash : undefined;
  }

  /** Remembers that `header` holds the key whose hash is `hash` (the header's form was checked). */
  rememberHeader(header: string, hash: string): void {
    this.headers[headerSlot(header)] = { token: header, hash };
  }
}

function headerSlot(header: string): number {
  const n = header.length;
  return n < 2 ? 0 : (header.charCodeAt(n - 1) * 31 + header.charCodeAt(n - 2)) & (HEADER_SLOTS - 1);
}
