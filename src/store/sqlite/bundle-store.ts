// Config bundles, one per project and env, stored as JSON next to the columns that find them.
import type { Database, Statement } from "better-sqlite3";
import type { Bundle } from "../../bundle/types.js";
import { ProjectOwnedElsewhere } from "../tenancy.js";
import { BUNDLE_HISTORY_LIMIT, type BundleStore, type BundleSummary, type FirstPublication, type HistoryEntry, type PublishedBy, type StoredBundle } from "../types.js";
import type { Durability } from "./wal-sync.js";

export interface BundleRow {
  project_id: string;
  env: string;
  org_id: string;
  version: string;
  stored_at: string;
  bundle: string;
}

export type SummaryRow = Omit<BundleRow, "bundle">;
export type HistoryRow = SummaryRow & { published_by: PublishedBy };
export interface FirstPublicationRow {
  project_id: string;
  env: string;
  org_id: string;
  first_stored_at: string;
}

/** An env's first bundle, kept by every later put (published_envs, migration 14). */
const RECORD_FIRST_PUBLICATION = `INSERT INTO published_envs (project_id, env, org_id, first_stored_at)
  VALUES (@project_id, @env, @org_id, @stored_at) ON CONFLICT (project_id, env) DO NOTHING`;

export class SqliteBundleStore implements BundleStore {
  private readonly getStmt: Statement<[string, string], Pick<BundleRow, "bundle" | "stored_at">>;
  private readonly versionStmt: Statement<[string, string], string>;
  private readonly putStmt: Statement<[BundleRow]>;
  private readonly replaceStmt: Statement<[BundleRow & { expected: string }]>;
  private readonly listStmt: Statement<[], SummaryRow>;
  private readonly firstsStmt: Statement<[], FirstPublicationRow>;
  private readonly recordFirstStmt: Statement<[BundleRow]>;
  private readonly orgsStmt: Statement<[string], string>;
  private readonly otherOwnerStmt: Statement<[string, string], string>;
  private readonly pingStmt: Statement<[]>;
  private readonly recordStmt: Statement<[BundleRow & { published_by: PublishedBy }]>;
  private readonly pruneStmt: Statement<[{ project_id: string; env: string; published_by: PublishedBy; keep: number }]>;
  private readonly historyStmt: Statement<[string, string], HistoryRow>;
  private readonly historyVersionStmt: Statement<[string, string, string], Pick<BundleRow, "bundle" | "stored_at">>;
  /** The bundle, its history entry and the pruning, together (a savepoint inside writeAll): whether it stored, see put(). */
  private readonly publish: (row: BundleRow, expectedVersion: string | null | undefined) => boolean;
  /** The learner's compare and set, with its history entry and pruning: whether it replaced. */
  private readonly publishLearned: (row: BundleRow & { expected: string }) => boolean;

  constructor(
    db: Database,
    private readonly durability: Durability,
  ) {
    this.getStmt = db.prepare("SELECT bundle, stored_at FROM bundles WHERE project_id = ? AND env = ?");
    this.versionStmt = db
      .prepare<[string, string], string>("SELECT version FROM bundles WHERE project_id = ? AND env = ?")
      .pluck();
    this.putStmt = db.prepare(
      `INSERT INTO bundles (project_id, env, org_id, version, stored_at, bundle)
       VALUES (@project_id, @env, @org_id, @version, @stored_at, @bundle)
       ON CONFLICT (project_id, env) DO UPDATE SET org_id = excluded.org_id,
         version = excluded.version, stored_at = excluded.stored_at, bundle = excluded.bundle`,
    );
    this.replaceStmt = db.prepare(
      `UPDATE bundles SET org_id = @org_id, version = @version, stored_at = @stored_at, bundle = @bundle
       WHERE project_id = @project_id AND env = @env AND version = @expected`,
    );
    this.listStmt = db.prepare(
      "SELECT project_id, env, org_id, version, stored_at FROM bundles ORDER BY project_id, env",
    );
    this.firstsStmt = db.prepare("SELECT project_id, env, org_id, first_stored_at FROM published_envs");
    this.recordFirstStmt = db.prepare(RECORD_FIRST_PUBLICATION);
    this.orgsStmt = db.prepare<[string], string>("SELECT DISTINCT org_id FROM bundles WHERE project_id = ? ORDER BY org_id").pluck();
    this.otherOwnerStmt = db
      .prepare<[string, string], string>("SELECT org_id FROM bundles WHERE project_id = ? AND org_id != ? LIMIT 1")
      .pluck();
    this.pingStmt = db.prepare("SELECT 1 FROM bundles LIMIT 1");
    // Publishing a stored version again (an unchanged import) moves it to the front.
    this.recordStmt = db.prepare(
      `INSERT OR REPLACE INTO bundle_history (project_id, env, version, org_id, stored_at, bundle, published_by)
       VALUES (@project_id, @env, @version, @org_id, @stored_at, @bundle, @published_by)`,
    );
    // The newest BUNDLE_HISTORY_LIMIT of each publisher.
    this.pruneStmt = db.prepare(
      `DELETE FROM bundle_history WHERE project_id = @project_id AND env = @env AND published_by = @published_by AND seq NOT IN
         (SELECT seq FROM bundle_history WHERE project_id = @project_id AND env = @env AND published_by = @published_by
          ORDER BY seq DESC LIMIT @keep)`,
    );
    this.historyStmt = db.prepare(
      "SELECT project_id, env, org_id, version, stored_at, published_by FROM bundle_history WHERE project_id = ? AND env = ? ORDER BY seq DESC",
    );
    this.historyVersionStmt = db.prepare("SELECT bundle, stored_at FROM bundle_history WHERE project_id = ? AND env = ? AND version = ?");
    const record = (row: BundleRow, by: PublishedBy) => {
      this.recordStmt.run({ ...row, published_by: by });
      this.pruneStmt.run({ project_id: row.project_id, env: row.env, published_by: by, keep: BUNDLE_HISTORY_LIMIT });
    };
    this.publish = db.transaction((row: BundleRow, expectedVersion: string | null | undefined) => {
      // Read inside the transaction, so another process's put in between is seen (or fails this one busy).
      if (expectedVersion !== undefined && (this.versionStmt.get(row.project_id, row.env) ?? null) !== expectedVersion) return false;
      this.putStmt.run(row);
      this.recordFirstStmt.run(row);
      record(row, "operator");
      return true;
    });
    this.publishLearned = db.transaction((row: BundleRow & { expected: string }) => {
      if (this.replaceStmt.run(row).changes !== 1) return false;
      record(row, "learner");
      return true;
    });
  }

  async get(projectId: string, env: string): Promise<StoredBundle | undefined> {
    const row = this.getStmt.get(projectId, env);
    return row && { bundle: JSON.parse(row.bundle) as Bundle, storedAt: row.stored_at };
  }

  async version(projectId: string, env: string): Promise<string | undefined> {
    return this.versionStmt.get(projectId, env);
  }

  async put(bundle: Bundle, storedAt: string, expectedVersion?: string | null): Promise<boolean> {
    return this.durability.commit(() => this.putNow(bundle, storedAt, expectedVersion));
  }

  async replace(bundle: Bundle, storedAt: string, expectedVersion: string): Promise<boolean> {
    return this.durability.commit(() => this.publishLearned({ ...bundleRow(bundle, storedAt), expected: expectedVersion }));
  }

  async orgsOf(projectId: string): Promise<string[]> {
    return this.orgsStmt.all(projectId);
  }

  /** put, synchronously: for writes grouped in one transaction (SqliteStores.writeAll). */
  putNow(bundle: Bundle, storedAt: string, expectedVersion?: string | null): boolean {
    const owner = this.otherOwnerStmt.get(bundle.projectId, bundle.orgId);
    if (owner !== undefined) throw new ProjectOwnedElsewhere(bundle.projectId, owner);
    return this.publish(bundleRow(bundle, storedAt), expectedVersion);
  }

  async list(): Promise<BundleSummary[]> {
    return this.listStmt.all().map(summary);
  }

  async firstPublications(): Promise<FirstPublication[]> {
    return this.firstsStmt.all().map(firstPublication);
  }

  async history(projectId: string, env: string): Promise<HistoryEntry[]> {
    return this.historyStmt.all(projectId, env).map((row) => ({ ...summary(row), by: row.published_by }));
  }

  async historyVersion(projectId: string, env: string, version: string): Promise<StoredBundle | undefined> {
    const row = this.historyVersionStmt.get(projectId, env, version);
    return row && { bundle: JSON.parse(row.bundle) as Bundle, storedAt: row.stored_at };
  }

  /** Throws when the table cannot be read. */
  ping(): void {
    this.pingStmt.get();
  }
}

export function summary(row: SummaryRow): BundleSummary {
  return { orgId: row.org_id, projectId: row.project_id, env: row.env, version: row.version, storedAt: row.stored_at };
}

export function firstPublication(row: FirstPublicationRow): FirstPublication {
  return { orgId: row.org_id, projectId: row.project_id, env: row.env, storedAt: row.first_stored_at };
}

export function bundleRow(bundle: Bundle, storedAt: string): BundleRow {
  return {
    project_id: bundle.projectId,
    env: bundle.env,
    org_id: bundle.orgId,
    version: bundle.version,
    stored_at: storedAt,
    bundle: JSON.stringify(bundle),
  };
}
