// API keys: one row per key, the record's fields as columns so the CLI can query them.
import type { ISql, Sql } from "postgres";
import type { KeyKind, KeyRecord, KeyStore } from "../types.js";
import { notifyChange } from "./changes.js";

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
  constructor(private readonly sql: Sql) {}

  async byHash(secretHash: string): Promise<KeyRecord | undefined> {
    const [row] = await this.sql<KeyRow[]>`SELECT * FROM keys WHERE secret_hash = ${secretHash}`;
    return row && fromRow(row);
  }

  async byId(id: string): Promise<KeyRecord | undefined> {
    const [row] = await this.sql<KeyRow[]>`SELECT * FROM keys WHERE id = ${id}`;
    return row && fromRow(row);
  }

  async put(key: KeyRecord): Promise<void> {
    await this.sql.begin((tx) => putKey(tx, key));
  }

  async list(): Promise<KeyRecord[]> {
    return (await this.sql<KeyRow[]>`SELECT * FROM keys ORDER BY created_at, added`).map(fromRow);
  }
}

/**
 * Inserts or replaces the key with the same id, on `sql` (the pool or a transaction). An upsert on
 * the id: another key whose secret_hash collides is a constraint error, never silently replaced.
 */
export async function putKey(sql: ISql, key: KeyRecord): Promise<void> {
  const row = {
    id: key.id,
    secret_hash: key.secretHash,
    kind: key.kind,
    org_id: key.orgId,
    project_id: key.projectId ?? null,
    scopes: sql.json(key.scopes as string[]),
    created_at: key.createdAt,
    expires_at: key.expiresAt ?? null,
    revoked_at: key.revokedAt ?? null,
    rotated_to: key.rotatedTo ?? null,
    rate_limit: key.rateLimit === undefined ? null : sql.json({ ...key.rateLimit }),
  };
  await sql`
    INSERT INTO keys ${sql(row)}
    ON CONFLICT (id) DO UPDATE SET secret_hash = EXCLUDED.secret_hash, kind = EXCLUDED.kind,
      org_id = EXCLUDED.org_id, project_id = EXCLUDED.project_id, scopes = EXCLUDED.scopes,
      created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at, revoked_at = EXCLUDED.revoked_at,
      rotated_to = EXCLUDED.rotated_to, rate_limit = EXCLUDED.rate_limit`;
  await notifyChange(sql, { kind: "key", secretHash: key.secretHash });
}
