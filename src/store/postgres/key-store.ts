// API keys: one row per key, the record's fields as columns so the CLI can query them.
import type pg from "pg";
import type { KeyKind, KeyRecord, KeyStore } from "../types.js";
import { notifyChange } from "./changes.js";
import { type Queryable, read, run, transaction } from "./db.js";

interface KeyRow {
  id: string;
  secret_hash: string;
  kind: string;
  org_id: string;
  project_id: string | null;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  rotated_to: string | null;
  rate_limit: KeyRecord["rateLimit"] | null;
}

function fromRow(row: KeyRow): KeyRecord {
  // Optional fields are left out rather than set to undefined: absent in, absent out.
  return {
    id: row.id,
    secretHash: row.secret_hash,
    kind: row.kind as KeyKind,
    orgId: row.org_id,
    ...(row.project_id !== null && { projectId: row.project_id }),
    scopes: row.scopes,
    createdAt: row.created_at,
    ...(row.expires_at !== null && { expiresAt: row.expires_at }),
    ...(row.revoked_at !== null && { revokedAt: row.revoked_at }),
    ...(row.rotated_to !== null && { rotatedTo: row.rotated_to }),
    ...(row.rate_limit !== null && { rateLimit: row.rate_limit }),
  };
}

export class PostgresKeyStore implements KeyStore {
  constructor(private readonly pool: pg.Pool) {}

  async byHash(secretHash: string): Promise<KeyRecord | undefined> {
    const [row] = await read<KeyRow>(this.pool, "SELECT * FROM keys WHERE secret_hash = $1", [secretHash]);
    return row && fromRow(row);
  }

  async byId(id: string): Promise<KeyRecord | undefined> {
    const [row] = await read<KeyRow>(this.pool, "SELECT * FROM keys WHERE id = $1", [id]);
    return row && fromRow(row);
  }

  async put(key: KeyRecord): Promise<void> {
    await transaction(this.pool, (tx) => putKey(tx, key));
  }

  async revoke(id: string, at: string): Promise<KeyRecord | undefined> {
    return transaction(this.pool, async (tx) => {
      const [row] = (await run<KeyRow>(tx, "UPDATE keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING *", [id, at])).rows;
      if (row === undefined) return undefined;
      await notifyChange(tx, { kind: "key", secretHash: row.secret_hash });
      return fromRow(row);
    });
  }

  async rotate(id: string, replacement: KeyRecord, expiresAt: string): Promise<boolean> {
    return transaction(this.pool, async (tx) => {
      const [old] = (
        await run<{ secret_hash: string }>(
          tx,
          "UPDATE keys SET rotated_to = $2, expires_at = $3 WHERE id = $1 AND revoked_at IS NULL AND rotated_to IS NULL RETURNING secret_hash",
          [id, replacement.id, expiresAt],
        )
      ).rows;
      if (old === undefined) return false;
      await notifyChange(tx, { kind: "key", secretHash: old.secret_hash });
      await putKey(tx, replacement);
      return true;
    });
  }

  async list(): Promise<KeyRecord[]> {
    return (await read<KeyRow>(this.pool, "SELECT * FROM keys ORDER BY created_at, added")).map(fromRow);
  }
}

/**
 * Inserts or replaces the key with the same id; call it inside a transaction (the notice goes with
 * the write). An upsert on the id: another key whose secret_hash collides is a constraint error,
 * never silently replaced.
 */
export async function putKey(tx: Queryable, key: KeyRecord): Promise<void> {
  await run(
    tx,
    `INSERT INTO keys (id, secret_hash, kind, org_id, project_id, scopes, created_at, expires_at, revoked_at, rotated_to, rate_limit)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11::jsonb)
     ON CONFLICT (id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, kind = EXCLUDED.kind,
       org_id = EXCLUDED.org_id, project_id = EXCLUDED.project_id, scopes = EXCLUDED.scopes,
       created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at, revoked_at = EXCLUDED.revoked_at,
       rotated_to = EXCLUDED.rotated_to, rate_limit = EXCLUDED.rate_limit`,
    [
      key.id,
      key.secretHash,
      key.kind,
      key.orgId,
      key.projectId ?? null,
      // jsonb as JSON text: pg would send a JavaScript array as a PostgreSQL array literal.
      JSON.stringify(key.scopes),
      key.createdAt,
      key.expiresAt ?? null,
      key.revokedAt ?? null,
      key.rotatedTo ?? null,
      key.rateLimit === undefined ? null : JSON.stringify({ ...key.rateLimit }),
    ],
  );
  await notifyChange(tx, { kind: "key", secretHash: key.secretHash });
}
