// Day-to-day key operations (decisions.md §1, §8), shared by the CLI and the tests: create,
// revoke, rotate. Rotation issues a replacement with the same tenant, scopes and limits and
// keeps the old key valid for 7 days (or until its own earlier expiry).
import type { KeyKind, KeyRecord, KeyStore } from "../../store/types.js";
import { type KeyInput, type Sha256, generateKey, toKeyRecord } from "./api-key.js";

export const ROTATION_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

export interface NewKey {
  /** The full secret: shown once, never stored. */
  readonly secret: string;
  readonly record: KeyRecord;
}

/** A new key's secret and record, not stored yet. */
function newKey(input: Omit<KeyInput, "key"> & { kind: KeyKind }, at: { sha256: Sha256; now: number }): NewKey {
  const { kind, ...rest } = input;
  const secret = generateKey(kind);
  return { secret, record: toKeyRecord({ ...rest, key: secret }, at.sha256, new Date(at.now).toISOString()) };
}

export async function createKey(keys: KeyStore, input: Omit<KeyInput, "key"> & { kind: KeyKind }, at: { sha256: Sha256; now: number }): Promise<NewKey> {
  const created = newKey(input, at);
  await keys.put(created.record);
  return created;
}

/** The key as stored once revoked (its first revocation when it was revoked already); undefined when it is gone. */
export function revokeKey(keys: KeyStore, record: KeyRecord, now: number): Promise<KeyRecord | undefined> {
  return keys.revoke(record.id, new Date(now).toISOString());
}

/**
 * The replacement, stored with the old key marked rotated to it in one write; undefined when the
 * old key was revoked or rotated since `record` was read (nothing is written then), so a
 * revocation made meanwhile is never undone.
 */
export async function rotateKey(keys: KeyStore, record: KeyRecord, at: { sha256: Sha256; now: number }): Promise<NewKey | undefined> {
  const replacement = newKey(
    {
      kind: record.kind,
      orgId: record.orgId,
      ...(record.projectId !== undefined && { projectId: record.projectId }),
      scopes: record.scopes,
      ...(record.expiresAt !== undefined && { expiresAt: record.expiresAt }),
      ...(record.rateLimit !== undefined && { rateLimit: record.rateLimit }),
    },
    at,
  );
  const graceEnd = at.now + ROTATION_GRACE_MS;
  const ownEnd = record.expiresAt === undefined ? Infinity : Date.parse(record.expiresAt);
  const rotated = await keys.rotate(record.id, replacement.record, new Date(Math.min(graceEnd, ownEnd)).toISOString());
  return rotated ? replacement : undefined;
}
