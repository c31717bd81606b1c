// Bundles and their history in D1 (the SQLite store's tables and SQL), with each version's JSON
// also in KV under a key that names the version. The app's bundle cache asks version() at most
// once a second per isolate — a one-row D1 read, so a publication is seen everywhere within the
// same bound as on Node — and reads the bundle only when the version changed: from KV, which
// never holds a stale body for a version, and from D1 only when KV has not got it yet.
import type { Bundle } from "../../bundle/types.js";
import { type BundleRow, type FirstPublicationRow, type HistoryRow, type SummaryRow, bundleRow, firstPublication, summary } from "../sqlite/bundle-store.js";
import { ProjectOwnedElsewhere } from "../tenancy.js";
import { BUNDLE_HISTORY_LIMIT, type BundleStore, type BundleSummary, type FirstPublication, type HistoryEntry, type PublishedBy, type StoredBundle } from "../types.js";
import type { D1Database, KVNamespace } from "./bindings.js";

const SUMMARY = "project_id, env, org_id, version, stored_at";
/** Every env's first bundle: a few rows. */
export const FIRST_PUBLICATIONS = "SELECT project_id, env, org_id, first_stored_at FROM published_envs";

/** The KV key of one version of a bundle: its value never changes, so KV's eventual consistency is harmless. */
export function bundleKvKey(projectId: string, env: string, version: string): string {
  return `bundle/${encodeURIComponent(projectId)}/${encodeURIComponent(env)}/${encodeURIComponent(version)}`;
}

/** What KV holds: the stored bundle as JSON. */
const stored = (text: string): StoredBundle => JSON.parse(text) as StoredBundle;

export class D1BundleStore implements BundleStore {
  constructor(
    private readonly db: D1Database,
    private readonly kv: KVNamespace,
  ) {}

  async get(projectId: string, env: string): Promise<StoredBundle | undefined> {
    const version = await this.version(projectId, env);
    if (version === undefined) return undefined;
    const cached = await this.kv.get(bundleKvKey(projectId, env, version), "text");
    if (cached !== null) return stored(cached);
    const row = await this.db
      .prepare("SELECT version, bundle, stored_at FROM bundles WHERE project_id = ?1 AND env = ?2")
      .bind(projectId, env)
      .first<Pick<BundleRow, "version" | "bundle" | "stored_at">>();
    if (row === null) return undefined;
    const found = { bundle: JSON.parse(row.bundle) as Bundle, storedAt: row.stored_at };
    await this.kv.put(bundleKvKey(projectId, env, row.version), JSON.stringify(found));
    return found;
  }

  async version(projectId: string, env: string): Promise<string | undefined> {
    const row = await this.db.prepare("SELECT version FROM bundles WHERE project_id = ?1 AND env = ?2").bind(projectId, env).first<{ version: string }>();
    return row?.version;
  }

  async orgsOf(projectId: string): Promise<string[]> {
    const { results } = await this.db.prepare("SELECT DISTINCT org_id FROM bundles WHERE project_id = ?1 ORDER BY org_id").bind(projectId).all<{ org_id: string }>();
    return results.map((row) => row.org_id);
  }

  /**
   * The bundle, its history entry and the pruning in one D1 batch (one transaction); KV after, so
   * it never holds a version D1 refused. The owner check is inside the batch too: a bundle of
   * another organization stored meanwhile makes the insert's org_id NULL, which NOT NULL refuses,
   * and the whole batch with it.
   */
  async put(bundle: Bundle, storedAt: string, expectedVersion?: string | null): Promise<boolean> {
    const row = bundleRow(bundle, storedAt);
    const values = [row.project_id, row.env, row.org_id, row.version, row.stored_at, row.bundle];
    let stored;
    try {
      [stored] = await this.db.batch([
        // With an expected version, the row is written only while it still holds that version;
        // expecting none (?8), only while there is no row.
        this.db
          .prepare(
            `INSERT INTO bundles (project_id, env, org_id, version, stored_at, bundle)
             SELECT ?1, ?2, CASE WHEN EXISTS (SELECT 1 FROM bundles WHERE project_id = ?1 AND org_id != ?3) THEN NULL ELSE ?3 END, ?4, ?5, ?6
             WHERE CASE WHEN ?8 THEN NOT EXISTS (SELECT 1 FROM bundles WHERE project_id = ?1 AND env = ?2)
                        ELSE ?7 IS NULL OR EXISTS (SELECT 1 FROM bundles WHERE project_id = ?1 AND env = ?2 AND version = ?7) END
             ON CONFLICT (project_id, env) DO UPDATE SET org_id = excluded.org_id, version = excluded.version,
               stored_at = excluded.stored_at, bundle = excluded.bundle`,
          )
          .bind(...values, expectedVersion ?? null, expectedVersion === null ? 1 : 0),
        // Publishing a stored version again (an unchanged import) moves it to the front; only when it was stored.
        this.db
          .prepare(
            `INSERT OR REPLACE INTO bundle_history (project_id, env, org_id, version, stored_at, bundle, published_by)
             SELECT ?1, ?2, ?3, ?4, ?5, ?6, 'operator' WHERE EXISTS (SELECT 1 FROM bundles WHERE project_id = ?1 AND env = ?2 AND version = ?4 AND stored_at = ?5)`,
          )
          .bind(...values),
        // The env's first bundle, once one is stored: a later one keeps it (parquet/partitions.ts decides folders by it).
        this.db
          .prepare(
            `INSERT INTO published_envs (project_id, env, org_id, first_stored_at)
             SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM bundles WHERE project_id = ?1 AND env = ?2)
             ON CONFLICT (project_id, env) DO NOTHING`,
          )
          .bind(row.project_id, row.env, row.org_id, row.stored_at),
        this.prune(row, "operator"),
      ]);
    } catch (error) {
      const owner = await this.otherOwner(bundle);
      throw owner === undefined ? error : new ProjectOwnedElsewhere(bundle.projectId, owner);
    }
    if (stored?.meta.changes !== 1) return false;
    await this.kv.put(bundleKvKey(bundle.projectId, bundle.env, bundle.version), JSON.stringify({ bundle, storedAt }));
    return true;
  }

  private async otherOwner(bundle: Bundle): Promise<string | undefined> {
    const owner = await this.db
      .prepare("SELECT org_id FROM bundles WHERE project_id = ?1 AND org_id != ?2 LIMIT 1")
      .bind(bundle.projectId, bundle.orgId)
      .first<{ org_id: string }>();
    return owner?.org_id;
  }

  /** The newest BUNDLE_HISTORY_LIMIT entries of each publisher, so the learner's never push out people's. */
  private prune(row: BundleRow, by: PublishedBy) {
    return this.db
      .prepare(
        `DELETE FROM bundle_history WHERE project_id = ?1 AND env = ?2 AND published_by = ?3 AND seq NOT IN
           (SELECT seq FROM bundle_history WHERE project_id = ?1 AND env = ?2 AND published_by = ?3 ORDER BY seq DESC LIMIT ?4)`,
      )
      .bind(row.project_id, row.env, by, BUNDLE_HISTORY_LIMIT);
  }

  /** The learner's compare and set; its history entry only when the set took place (same batch). */
  async replace(bundle: Bundle, storedAt: string, expectedVersion: string): Promise<boolean> {
    const row = bundleRow(bundle, storedAt);
    const [result] = await this.db.batch([
      this.db
        .prepare("UPDATE bundles SET org_id = ?3, version = ?4, stored_at = ?5, bundle = ?6 WHERE project_id = ?1 AND env = ?2 AND version = ?7")
        .bind(row.project_id, row.env, row.org_id, row.version, row.stored_at, row.bundle, expectedVersion),
      this.db
        .prepare(
          `INSERT OR REPLACE INTO bundle_history (project_id, env, org_id, version, stored_at, bundle, published_by)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6, 'learner' WHERE EXISTS (SELECT 1 FROM bundles WHERE project_id = ?1 AND env = ?2 AND version = ?4 AND stored_at = ?5)`,
        )
        .bind(row.project_id, row.env, row.org_id, row.version, row.stored_at, row.bundle),
      this.prune(row, "learner"),
    ]);
    if (result?.meta.changes !== 1) return false;
    await this.kv.put(bundleKvKey(bundle.projectId, bundle.env, bundle.version), JSON.stringify({ bundle, storedAt }));
    return true;
  }

  async list(): Promise<BundleSummary[]> {
    const { results } = await this.db.prepare(`SELECT ${SUMMARY} FROM bundles ORDER BY project_id, env`).all<SummaryRow>();
    return results.map(summary);
  }

  async firstPublications(): Promise<FirstPublication[]> {
    const { results } = await this.db.prepare(FIRST_PUBLICATIONS).all<FirstPublicationRow>();
    return results.map(firstPublication);
  }

  async history(projectId: string, env: string): Promise<HistoryEntry[]> {
    const { results } = await this.db
      .prepare(`SELECT ${SUMMARY}, published_by FROM bundle_history WHERE project_id = ?1 AND env = ?2 ORDER BY seq DESC`)
      .bind(projectId, env)
      .all<HistoryRow>();
    return results.map((row) => ({ ...summary(row), by: row.published_by }));
  }

  async historyVersion(projectId: string, env: string, version: string): Promise<StoredBundle | undefined> {
    const row = await this.db
      .prepare("SELECT bundle, stored_at FROM bundle_history WHERE project_id = ?1 AND env = ?2 AND version = ?3")
      .bind(projectId, env, version)
      .first<Pick<BundleRow, "bundle" | "stored_at">>();
    return row === null ? undefined : { bundle: JSON.parse(row.bundle) as Bundle, storedAt: row.stored_at };
  }
}
