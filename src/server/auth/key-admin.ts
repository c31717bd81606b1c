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

export async function createKey(keys: KeyStore, input: Omit<KeyInput, "key"> & { kind: KeyKind }, at: { sha256: Sha256; now: number }): Promise<NewKey> {
  const { kind, ...rest } = input;
  const secret = generateKey(kind);
  const record = toKeyRecord({ ...rest, key: secret }, at.sha256, new Date(at.now).toISOString());
  await keys.put(record);
  return { secret, record };
}

export async function revokeKey(keys: KeyStore, record: KeyRecord, now: number): Promise<KeyRecord> {
  const revoked: KeyRecord = { ...record, revokedAt: record.revokedAt ?? new Date(now).toISOString() };
  await keys.put(revoked);
  return revoked;
}

export async function rotateKey(keys: KeyStore, record: KeyRecord, at: { sha256: Sha256; now: number }): Promise<NewKey> {
  const replacement = await createKey(
    keys,
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
  await keys.put({ ...record, expiresAt: new Date(Math.min(graceEnd, ownEnd)).toISOString(), rotatedTo: replacement.record.id });
  return replacement;
}
