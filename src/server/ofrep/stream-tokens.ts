// Tokens for event-stream URLs. Browsers open OFREP's event stream with EventSource, which sends
// no Authorization header, so the URL the bulk answer hands out carries a token instead: which
// key (its hash), project and env it was issued for and until when, signed with HMAC-SHA256
// under the service's stream secret. The token holds no secret: the key's hash only names the
// key, and a stream opened with it is checked against that key's current record (revoked,
// expired, scope) like any request. Servers behind one load balancer share `streamSecret`.
import { type Sha256, constantTimeEqual } from "../auth/api-key.js";
import type { Clock } from "../clock.js";

export interface StreamGrant {
  readonly keyHash: string;
  readonly projectId: string;
  readonly env: string;
}

const BLOCK_BYTES = 64;
/** Keys whose last token is remembered; past this many the memory starts over. */
const MAX_REMEMBERED = 1024;

/** The last token issued for a key: the same grant and expiry second give the same token. */
interface Issued {
  readonly projectId: string;
  readonly env: string;
  readonly expires: number;
  readonly token: string;
}
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class StreamTokens {
  private readonly inner: Uint8Array;
  private readonly outer: Uint8Array;
  /** By key hash. Every OFREP bulk answer carries a token: one signing per key, project and env per second, not per answer. */
  private readonly issued = new Map<string, Issued>();

  constructor(
    private readonly options: { readonly sha256: Sha256; readonly clock: Clock; readonly ttlMs: number; readonly secret: Uint8Array },
  ) {
    // HMAC (RFC 2104): a key longer than a block is hashed first, then padded with zeros.
    const key = new Uint8Array(BLOCK_BYTES);
    key.set(options.secret.length > BLOCK_BYTES ? options.sha256(options.secret) : options.secret);
    this.inner = key.map((b) => b ^ 0x36);
    this.outer = key.map((b) => b ^ 0x5c);
  }

  issue(grant: StreamGrant): string {
    const expires = Math.floor((this.options.clock.now() + this.options.ttlMs) / 1000);
    const last = this.issued.get(grant.keyHash);
    if (last !== undefined && last.expires === expires && last.projectId === grant.projectId && last.env === grant.env) return last.token;
    const payload = base64url(encoder.encode(JSON.stringify([grant.keyHash, grant.projectId, grant.env, expires])));
    const token = `${payload}.${base64url(this.sign(payload))}`;
    if (this.issued.size >= MAX_REMEMBERED) this.issued.clear();
    this.issued.set(grant.keyHash, { projectId: grant.projectId, env: grant.env, expires, token });
    return token;
  }

  /** The grant of a token this service signed and that has not expired; undefined otherwise. */
  verify(token: string): StreamGrant | undefined {
    const [payload, signature, extra] = token.split(".");
    if (payload === undefined || signature === undefined || extra !== undefined) return undefined;
    if (!constantTimeEqual(base64url(this.sign(payload)), signature)) return undefined;
    let fields: unknown;
    try {
      fields = JSON.parse(decoder.decode(fromBase64url(payload)));
    } catch {
      return undefined;
    }
    if (!Array.isArray(fields) || fields.length !== 4) return undefined;
    const [keyHash, projectId, env, expires] = fields as unknown[];
    if (typeof keyHash !== "string" || typeof projectId !== "string" || typeof env !== "string" || typeof expires !== "number") return undefined;
    if (expires * 1000 <= this.options.clock.now()) return undefined;
    return { keyHash, projectId, env };
  }

  private sign(payload: string): Uint8Array {
    const message = encoder.encode(payload);
    const first = new Uint8Array(BLOCK_BYTES + message.length);
    first.set(this.inner);
    first.set(message, BLOCK_BYTES);
    const second = new Uint8Array(BLOCK_BYTES + 32);
    second.set(this.outer);
    second.set(this.options.sha256(first), BLOCK_BYTES);
    return this.options.sha256(second);
  }
}

/** A random stream secret for one process (tokens then hold for that process only). */
export function randomStreamSecret(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(32));
}

/** Bytes as base64url without padding (also the console's session cookie). */
export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromBase64url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
