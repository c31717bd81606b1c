// Checks of a key as the import file gives it (decisions.md §1, §8), shared with `keys create`:
// every problem with its path, as bundle validation reports them. Secrets never appear in a
// message, not even in part.
import type { BundleProblem } from "../../bundle/validate.js";
import {
  NON_EMPTY_STRING, OBJECT, POSITIVE_NUMBER, STRING, at, fields, isRecord, mustBe, show, type Guard, type Problems,
} from "../../bundle/validate-values.js";
import { type KeyInput, keyKind } from "../auth/api-key.js";
import type { KeyKind } from "../../store/types.js";

/** console:read signs a person into the console (read only, their organization): never an SDK's key. */
export const KNOWN_SCOPES: readonly string[] = ["sdk:read", "sdk:write", "mgmt:read", "mgmt:write", "admin", "console:read"];
export const KEY_KINDS: readonly KeyKind[] = ["pk", "sk", "mk", "ak"];
export const KEY_FORMAT = "vane_<pk|sk|mk|ak>_<secret of 32+ base62/base64url characters>";

/** What a publishable key may hold: it ships in browser code, where anyone can read it. */
const PUBLISHABLE_SCOPES: readonly string[] = ["sdk:read", "sdk:write"];
const SDK_SCOPES = PUBLISHABLE_SCOPES;
const KEY_FIELDS = ["key", "orgId", "projectId", "scopes", "expiresAt", "revoked", "rateLimit"];
const RATE_LIMIT_FIELDS = ["requestsPerSecond", "burst"];

const BOOLEAN: Guard<boolean> = { test: (v): v is boolean => typeof v === "boolean", expected: "a boolean" };
// The limiter spends one token per request: a burst below 1 would refuse every request.
const BURST: Guard<number> = {
  test: (v): v is number => typeof v === "number" && Number.isFinite(v) && v >= 1,
  expected: "a finite number >= 1",
};

/** A key of the import file: its problems, and the input when there are none. */
export function checkImportKey(raw: unknown, base: string): { problems: BundleProblem[]; input?: KeyInput } {
  const out: Problems = [];
  if (!isRecord(raw)) return { problems: [{ path: base, message: mustBe("an object", raw) }] };
  unknownFields(out, raw, { base, known: KEY_FIELDS });
  const key = fields(out, raw, base).need("key", STRING);
  const kind = key === undefined ? undefined : keyKind(key);
  if (key !== undefined && kind === undefined) out.push({ path: at(base, "key"), message: `must have the form ${KEY_FORMAT}` });
  checkKeyFields(out, raw, { base, kind });
  fields(out, raw, base).maybe("revoked", BOOLEAN);
  return out.length > 0 ? { problems: out } : { problems: [], input: raw as unknown as KeyInput };
}

/** The fields a key has besides its secret: orgId, projectId, scopes, expiresAt, rateLimit. */
export function checkKeyFields(out: Problems, raw: Record<string, unknown>, where: { base: string; kind: KeyKind | undefined }): void {
  const { base, kind } = where;
  const f = fields(out, raw, base);
  f.need("orgId", NON_EMPTY_STRING);
  f.maybe("projectId", NON_EMPTY_STRING);
  f.maybeTimestamp("expiresAt");
  const scopes = f.need("scopes", { test: Array.isArray, expected: "an array of scopes" } as Guard<unknown[]>);
  if (scopes !== undefined) checkScopes(out, scopes, { base: at(base, "scopes"), kind });
  const rateLimit = f.maybe("rateLimit", OBJECT);
  if (rateLimit !== undefined) {
    const path = at(base, "rateLimit");
    unknownFields(out, rateLimit, { base: path, known: RATE_LIMIT_FIELDS });
    fields(out, rateLimit, path).need("requestsPerSecond", POSITIVE_NUMBER);
    fields(out, rateLimit, path).need("burst", BURST);
  }
}

function checkScopes(out: Problems, scopes: unknown[], where: { base: string; kind: KeyKind | undefined }): void {
  if (scopes.length === 0) out.push({ path: where.base, message: `must list at least one scope (${KNOWN_SCOPES.join(", ")})` });
  const seen = new Map<unknown, number>();
  scopes.forEach((scope, i) => {
    const path = at(where.base, i);
    const first = seen.get(scope);
    if (first !== undefined) out.push({ path, message: `${show(scope)} is listed twice (first at ${at(where.base, first)})` });
    else seen.set(scope, i);
    if (typeof scope !== "string" || !KNOWN_SCOPES.includes(scope)) {
      out.push({ path, message: mustBe(`one of ${KNOWN_SCOPES.join(", ")}`, scope) });
    } else if (where.kind === "pk" && !PUBLISHABLE_SCOPES.includes(scope)) {
      out.push({ path, message: `a publishable (pk) key ships in browser code: it may hold only ${PUBLISHABLE_SCOPES.join(" and ")}` });
    } else if (scope === "console:read" && scopes.some((other) => SDK_SCOPES.includes(other as string))) {
      // A key that signs a person into the console must not also sit in an SDK's configuration.
      out.push({ path, message: `console:read is for people signing in to the console: a key with it may not also hold ${SDK_SCOPES.join(" or ")}` });
    }
  });
}

/** Misspelt fields are refused rather than ignored: `scope` for `scopes` would lose the scopes. */
export function unknownFields(out: Problems, raw: Record<string, unknown>, where: { base: string; known: readonly string[] }): void {
  for (const name of Object.keys(raw)) {
    if (!where.known.includes(name)) {
      // No value in the message: a misplaced field may hold a secret.
      out.push({ path: at(where.base, name), message: `is not a known field (known: ${where.known.join(", ")})` });
    }
  }
}
