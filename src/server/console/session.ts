// The console's session: who signed in ("admin", or an API key's id) and until when, in a cookie
// signed with HMAC-SHA256 (Web Crypto, so the Worker runs it too). The cookie holds no secret and
// no organization: a key's current record is read on every request, so revoking the key ends its
// sessions. Signing out ends a session here at once; the cookie's own expiry bounds the rest
// (a server that did not see the sign-out still honours a copied cookie until then).
import { constantTimeEqual } from "../auth/api-key.js";
import type { Clock } from "../clock.js";
import { base64url, fromBase64url } from "../ofrep/stream-tokens.js";

export const SESSION_COOKIE = "vane_console";
export const DEFAULT_SESSION_MS = 8 * 60 * 60 * 1000;

export interface Session {
  /** A random id, what sign-out ends. */
  readonly id: string;
  /** "admin", or the id (key_…) of the console:read key that signed in. */
  readonly who: string;
  /** ms since the epoch. */
  readonly expiresAt: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class ConsoleSessions {
  private readonly key: Promise<CryptoKey>;
  /** Ended sessions until they would have expired anyway. */
  private readonly ended = new Map<string, number>();

  constructor(private readonly options: { readonly secret: Uint8Array; readonly clock: Clock; readonly ttlMs: number }) {
    this.key = crypto.subtle.importKey("raw", options.secret as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  }

  get ttlMs(): number {
    return this.options.ttlMs;
  }

  /** A new session's cookie value. */
  async issue(who: string): Promise<string> {
    const id = base64url(crypto.getRandomValues(new Uint8Array(16)));
    const payload = base64url(encoder.encode(JSON.stringify([id, who, this.options.clock.now() + this.options.ttlMs])));
    return `${payload}.${await this.sign(payload)}`;
  }

  /** The session of a cookie value this service signed, unexpired and not ended; undefined otherwise. */
  async verify(value: string | undefined): Promise<Session | undefined> {
    const [payload, signature, extra] = (value ?? "").split(".");
    if (payload === undefined || signature === undefined || extra !== undefined || payload === "") return undefined;
    if (!constantTimeEqual(await this.sign(payload), signature)) return undefined;
    let fields: unknown;
    try {
      fields = JSON.parse(decoder.decode(fromBase64url(payload)));
    } catch {
      return undefined;
    }
    if (!Array.isArray(fields) || fields.length !== 3) return undefined;
    const [id, who, expiresAt] = fields as unknown[];
    if (typeof id !== "string" || typeof who !== "string" || typeof expiresAt !== "number") return undefined;
    if (expiresAt <= this.options.clock.now() || this.ended.has(id)) return undefined;
    return { id, who, expiresAt };
  }

  end(session: Session): void {
    const now = this.options.clock.now();
    for (const [id, expiresAt] of this.ended) if (expiresAt <= now) this.ended.delete(id);
    this.ended.set(session.id, session.expiresAt);
  }

  private async sign(payload: string): Promise<string> {
    return base64url(new Uint8Array(await crypto.subtle.sign("HMAC", await this.key, encoder.encode(payload))));
  }
}

/** A random session secret for one process (its sessions then hold for that process only). */
export function randomSessionSecret(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(32));
}

/** The Set-Cookie value: HttpOnly, SameSite=Strict, only under /console; Secure over HTTPS. */
export function sessionCookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

/** The session cookie's value in a Cookie header. */
export function sessionCookieValue(header: string | undefined): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === SESSION_COOKIE) return rest.join("=");
  }
  return undefined;
}
