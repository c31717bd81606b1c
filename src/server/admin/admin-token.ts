// The admin API's one credential (docs/api.md "Admin API"): a token configured on the server
// (`--admin-token`, VANE_ADMIN_TOKEN, a Worker secret), sent as `Authorization: Bearer`. Both sides
// are hashed with Web Crypto and the digests compared byte by byte in constant time, so neither
// the token's content nor its length shows in the time a refusal takes. API keys are not admin
// tokens: whatever their scopes, they are refused here, and the token is never a key on /v1.
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.js";
import { fail } from "../errors.js";

/** Shorter tokens are refused at start: the token is all that guards every tenant's keys. */
export const MIN_ADMIN_TOKEN_CHARS = 32;

const encoder = new TextEncoder();

/** Why `token` cannot be the admin token, or undefined when it can. */
export function adminTokenProblem(token: string): string | undefined {
  if (token.length < MIN_ADMIN_TOKEN_CHARS) return `the admin token must be at least ${MIN_ADMIN_TOKEN_CHARS} characters (e.g. \`openssl rand -hex 32\`)`;
  if (!/^[\x21-\x7e]+$/.test(token)) return "the admin token must be printable ASCII without spaces";
  return undefined;
}

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** Equal byte arrays in time that depends only on their length. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

export function requireAdminToken(token: string): MiddlewareHandler<AppEnv> {
  const expected = digest(token);
  return async function adminToken(c, next) {
    const header = c.req.header("Authorization");
    if (header === undefined || header.trim() === "") return fail(c, "UNAUTHORIZED", "Missing Authorization header");
    const given = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    if (given === undefined || !equalBytes(await digest(given), await expected)) return fail(c, "UNAUTHORIZED", "Invalid admin token");
    await next();
  };
}
