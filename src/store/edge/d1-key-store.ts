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

  async list(): Promise<KeyRecord[]> {
    const { results } = await this.db.prepare(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, rowid`).all<KeyRow>();
    return results.map(keyFromRow);
  }
}
