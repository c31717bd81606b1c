// API keys: one row per key, the record's fields as columns so the CLI can query them.
import type { Database, Statement } from "better-sqlite3";
import type { KeyKind, KeyRecord, KeyStore } from "../types.js";
import type { Durability } from "./wal-sync.js";

export interface KeyRow {
  id: string;
  secret_hash: string;
  kind: string;
  org_id: string;
  project_id: string | null;
  scopes: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  rotated_to: string | null;
  rate_limit: string | null;
}

export const KEY_COLUMNS =
  "id, secret_hash, kind, org_id, project_id, scopes, created_at, expires_at, revoked_at, rotated_to, rate_limit";

export function keyToRow(key: KeyRecord): KeyRow {
  return {
    id: key.id,
    secret_hash: key.secretHash,
    kind: key.kind,
    org_id: key.orgId,
    project_id: key.projectId ?? null,
    scopes: JSON.stringify(key.scopes),
    created_at: key.createdAt,
    expires_at: key.expiresAt ?? null,
    revoked_at: key.revokedAt ?? null,
    rotated_to: key.rotatedTo ?? null,
    rate_limit: key.rateLimit === undefined ? null : JSON.stringify(key.rateLimit),
  };
}

export function keyFromRow(row: KeyRow): KeyRecord {
  // Optional fields are left out rather than set to undefined: absent in, absent out.
  return {
    id: row.id,
    secretHash: row.secret_hash,
    kind: row.kind as KeyKind,
    orgId: row.org_id,
    ...(row.project_id !== null && { projectId: row.project_id }),
    scopes: JSON.parse(row.scopes) as string[],
    createdAt: row.created_at,
    ...(row.expires_at !== null && { expiresAt: row.expires_at }),
    ...(row.revoked_at !== null && { revokedAt: row.revoked_at }),
    ...(row.rotated_to !== null && { rotatedTo: row.rotated_to }),
    ...(row.rate_limit !== null && { rateLimit: JSON.parse(row.rate_limit) as KeyRecord["rateLimit"] }),
  };
}

export class SqliteKeyStore implements KeyStore {
  private readonly byHashStmt: Statement<[string], KeyRow>;
  private readonly byIdStmt: Statement<[string], KeyRow>;
  private readonly putStmt: Statement<[KeyRow]>;
  private readonly revokeStmt: Statement<[string, string]>;
  private readonly listStmt: Statement<[], KeyRow>;
  private readonly pingStmt: Statement<[]>;
  /** rotate(), in one transaction. */
  private readonly rotateNow: (id: string, replacement: KeyRecord, expiresAt: string) => boolean;

  constructor(
    db: Database,
    private readonly durability: Durability,
  ) {
    this.byHashStmt = db.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE secret_hash = ?`);
    this.byIdStmt = db.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?`);
    // An upsert, not INSERT OR REPLACE: REPLACE would silently delete another key whose
    // secret_hash collides; here that is a constraint error.
    this.putStmt = db.prepare(
      `INSERT INTO keys (${KEY_COLUMNS}) VALUES (@id, @secret_hash, @kind, @org_id, @project_id, @scopes,
         @created_at, @expires_at, @revoked_at, @rotated_to, @rate_limit)
       ON CONFLICT (id) DO UPDATE SET secret_hash = excluded.secret_hash, kind = excluded.kind,
         org_id = excluded.org_id, project_id = excluded.project_id, scopes = excluded.scopes,
         created_at = excluded.created_at, expires_at = excluded.expires_at,
         revoked_at = excluded.revoked_at, rotated_to = excluded.rotated_to,
         rate_limit = excluded.rate_limit`,
    );
    this.revokeStmt = db.prepare("UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?");
    const markRotated = db.prepare<[{ id: string; rotated_to: string; expires_at: string }]>(
      "UPDATE keys SET rotated_to = @rotated_to, expires_at = @expires_at WHERE id = @id AND revoked_at IS NULL AND rotated_to IS NULL",
    );
    this.rotateNow = db.transaction((id: string, replacement: KeyRecord, expiresAt: string) => {
      if (markRotated.run({ id, rotated_to: replacement.id, expires_at: expiresAt }).changes !== 1) return false;
      this.putNow(replacement);
      return true;
    });
    this.listStmt = db.prepare(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, rowid`);
    this.pingStmt = db.prepare("SELECT 1 FROM keys LIMIT 1");
  }

  async byHash(secretHash: string): Promise<KeyRecord | undefined> {
    const row = this.byHashStmt.get(secretHash);
    return row && keyFromRow(row);
  }

  async byId(id: string): Promise<KeyRecord | undefined> {
    const row = this.byIdStmt.get(id);
    return row && keyFromRow(row);
  }

  async put(key: KeyRecord): Promise<void> {
    await this.durability.commit(() => this.putNow(key));
  }

  /** put, synchronously: for writes grouped in one transaction (SqliteStores.writeAll). */
  putNow(key: KeyRecord): void {
    this.putStmt.run(keyToRow(key));
  }

  async revoke(id: string, at: string): Promise<KeyRecord | undefined> {
    await this.durability.commit(() => this.revokeStmt.run(at, id));
    return this.byId(id);
  }

  async rotate(id: string, replacement: KeyRecord, expiresAt: string): Promise<boolean> {
    return this.durability.commit(() => this.rotateNow(id, replacement, expiresAt));
  }

  async list(): Promise<KeyRecord[]> {
    return this.listStmt.all().map(keyFromRow);
  }

  /** Throws when the table cannot be read. */
  ping(): void {
    this.pingStmt.get();
  }
}
