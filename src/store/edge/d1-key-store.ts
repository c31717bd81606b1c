// API keys in D1: the SQLite store's rows and columns (sqlite/key-store.ts), bound by position.
import { KEY_COLUMNS, type KeyRow, keyFromRow, keyToRow } from "../sqlite/key-store.js";
import type { KeyRecord, KeyStore } from "../types.js";
import type { D1Database } from "./bindings.js";

const PLACEHOLDERS = KEY_COLUMNS.split(", ").map((_, i) => `?${i + 1}`).join(", ");
const UPDATES = KEY_COLUMNS.split(", ")
  .filter((column) => column !== "id")
  .map((column) => `${column} = excluded.${column}`)
  .join(", ");

export class D1KeyStore implements KeyStore {
  constructor(private readonly db: D1Database) {}

  async byHash(secretHash: string): Promise<KeyRecord | undefined> {
    const row = await this.db.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE secret_hash = ?1`).bind(secretHash).first<KeyRow>();
    return row === null ? undefined : keyFromRow(row);
  }

  async byId(id: string): Promise<KeyRecord | undefined> {
    const row = await this.db.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?1`).bind(id).first<KeyRow>();
    return row === null ? undefined : keyFromRow(row);
  }

  /** An upsert, as on SQLite: a colliding secret_hash of another key is a constraint error, never a silent delete. */
  async put(key: KeyRecord): Promise<void> {
    const row = keyToRow(key);
    const values = KEY_COLUMNS.split(", ").map((column) => row[column as keyof KeyRow]);
    await this.db.prepare(`INSERT INTO keys (${KEY_COLUMNS}) VALUES (${PLACEHOLDERS}) ON CONFLICT (id) DO UPDATE SET ${UPDATES}`).bind(...values).run();
  }

  async revoke(id: string, at: string): Promise<KeyRecord | undefined> {
    await this.db.prepare("UPDATE keys SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1").bind(id, at).run();
    return this.byId(id);
  }

  /** One batch (a transaction): the replacement goes in only while the old key may still be rotated, and the old key is marked under the same condition. */
  async rotate(id: string, replacement: KeyRecord, expiresAt: string): Promise<boolean> {
    const row = keyToRow(replacement);
    const values = KEY_COLUMNS.split(", ").map((column) => row[column as keyof KeyRow]);
    const rotatable = `EXISTS (SELECT 1 FROM keys WHERE id = ?${values.length + 1} AND revoked_at IS NULL AND rotated_to IS NULL)`;
    const [inserted] = await this.db.batch([
      this.db.prepare(`INSERT INTO keys (${KEY_COLUMNS}) SELECT ${PLACEHOLDERS} WHERE ${rotatable}`).bind(...values, id),
      this.db.prepare("UPDATE keys SET rotated_to = ?2, expires_at = ?3 WHERE id = ?1 AND revoked_at IS NULL AND rotated_to IS NULL").bind(id, replacement.id, expiresAt),
    ]);
    return inserted?.meta.changes === 1;
  }

  async list(): Promise<KeyRecord[]> {
    const { results } = await this.db.prepare(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, rowid`).all<KeyRow>();
    return results.map(keyFromRow);
  }
}
