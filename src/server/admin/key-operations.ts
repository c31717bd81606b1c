// Key management through the admin operations (`vane keys …`, the admin API): a new key's fields
// checked as `vane keys create` checks them and refused for another organization's project;
// revocation; rotation of a key that is still good. Keys are named by id: a secret never travels.
import type { BundleProblem } from "../../bundle/validate.js";
import { isRecord } from "../../bundle/validate-values.js";
import type { KeyKind, KeyRecord, Stores } from "../../store/types.js";
import { createKey, revokeKey, rotateKey } from "../auth/key-admin.js";
import { KEY_KINDS, checkKeyFields, unknownFields } from "./key-checks.js";
import { type CreatedKey, type KeyRequest, type OperationDependencies, type Revocation, type Rotation, publicKey } from "./operations.js";
import { AdminRefusal, refusedInput } from "./refusal.js";
import { tenancyProblems } from "./tenancy-checks.js";

const REQUEST_FIELDS = ["kind", "orgId", "projectId", "scopes", "expiresAt", "rateLimit"];

export type KeyStatus = "active" | "expired" | "revoked" | "rotated-grace";

/** The key's status at `now`, decided as the server's authentication decides it. */
export function keyStatus(key: Omit<KeyRecord, "secretHash">, now: number): KeyStatus {
  if (key.revokedAt !== undefined && Date.parse(key.revokedAt) <= now) return "revoked";
  if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now) return "expired";
  return key.rotatedTo !== undefined ? "rotated-grace" : "active";
}

/** Every problem of a key request; `kind` defaults to sk. */
export function keyRequestProblems(raw: unknown, now: number): BundleProblem[] {
  if (!isRecord(raw)) return [{ path: "(body)", message: "must be an object { orgId, projectId?, scopes, kind?, expiresAt?, rateLimit? }" }];
  const problems: BundleProblem[] = [];
  unknownFields(problems, raw, { base: "", known: REQUEST_FIELDS });
  const kind = raw.kind ?? "sk";
  if (!KEY_KINDS.includes(kind as KeyKind)) problems.push({ path: "kind", message: `must be one of ${KEY_KINDS.join(", ")}` });
  checkKeyFields(problems, raw, { base: "", kind: kind as KeyKind });
  if (problems.length === 0 && typeof raw.expiresAt === "string" && Date.parse(raw.expiresAt) <= now) {
    problems.push({ path: "expiresAt", message: "is in the past: the key would never work" });
  }
  return problems;
}

export async function createCheckedKey(stores: Stores, raw: unknown, deps: OperationDependencies): Promise<CreatedKey> {
  const now = deps.now();
  const problems = keyRequestProblems(raw, now);
  if (problems.length > 0) throw refusedInput(problems);
  const { kind = "sk", ...request } = raw as Partial<KeyRequest> & Omit<KeyRequest, "kind">;
  const [owned] = await tenancyProblems({ keys: [request], bundles: [] }, stores.bundles);
  if (owned !== undefined) throw refusedInput([{ path: "projectId", message: owned.message }]);
  const created = await createKey(stores.keys, { kind, ...request }, { sha256: deps.sha256, now });
  return { secret: created.secret, key: publicKey(created.record) };
}

export async function revokeKeyById(stores: Stores, id: string, deps: OperationDependencies): Promise<Revocation> {
  const key = await existingKey(stores, id);
  if (key.revokedAt !== undefined) return { key: publicKey(key), alreadyRevoked: true };
  const at = deps.now();
  const revoked = await revokeKey(stores.keys, key, at);
  if (revoked === undefined) throw new AdminRefusal("NOT_FOUND", `no key ${id}`);
  // The store keeps the first revocation: another one that landed since our read is that one.
  return { key: publicKey(revoked), alreadyRevoked: revoked.revokedAt !== new Date(at).toISOString() };
}

export async function rotateKeyById(stores: Stores, id: string, deps: OperationDependencies): Promise<Rotation> {
  const now = deps.now();
  const key = rotatable(await existingKey(stores, id), now);
  const replacement = await rotateKey(stores.keys, key, { sha256: deps.sha256, now });
  if (replacement === undefined) {
    // Revoked or rotated by someone else since it was read: refused as it would be now.
    rotatable(await existingKey(stores, id), now);
    throw refusal(`${key.id} changed while it was rotated; nothing was written, try again`);
  }
  const old = (await stores.keys.byId(key.id)) ?? key;
  return { secret: replacement.secret, key: publicKey(replacement.record), old: publicKey(old) };
}

/** The key, when it may be rotated at `now`; else the refusal saying why. */
function rotatable(key: KeyRecord, now: number): KeyRecord {
  const status = keyStatus(key, now);
  if (status === "revoked") throw refusal(`${key.id} was revoked at ${shortTime(key.revokedAt!)}: a revoked key is not rotated; create a new one with \`vane keys create\``);
  if (status === "expired") throw refusal(`${key.id} expired at ${shortTime(key.expiresAt!)}: create a new one with \`vane keys create\``);
  if (key.rotatedTo !== undefined) throw refusal(`${key.id} was already rotated to ${key.rotatedTo}; rotate that key instead`);
  return key;
}

async function existingKey(stores: Stores, id: string): Promise<KeyRecord> {
  const key = await stores.keys.byId(id);
  if (key === undefined) throw new AdminRefusal("NOT_FOUND", `no key ${id}`);
  return key;
}

const refusal = (message: string) => new AdminRefusal("BAD_REQUEST", message);

/** `2026-11-21T12:00:00.000Z` → `2026-11-21T12:00:00Z`: milliseconds only widen messages and tables. */
export function shortTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, "Z");
}
