// Config bundles, one per project and env, stored as JSON text next to the columns that find
// them, and the versions published (bundle_history): the newest BUNDLE_HISTORY_LIMIT of each publisher kept.
import type pg from "pg";
import { notifyChange } from "./changes.js";
import { type Queryable, read, run, transaction } from "./db.js";
import type { Bundle } from "../../bundle/types.js";
import { ProjectOwnedElsewhere } from "../tenancy.js";
import { BUNDLE_HISTORY_LIMIT, type BundleStore, type BundleSummary, type FirstPublication, type HistoryEntry, type PublishedBy, type StoredBundle } from "../types.js";

interface SummaryRow {
  project_id: string;
  env: string;
  org_id: string;
  version: string;
  stored_at: string;
}

/** First key of the two-key advisory locks on a project's bundles. */
const PROJECT_LOCKS = 1;

export class PostgresBundleStore implements BundleStore {
  constructor(private readonly pool: pg.Pool) {}

  async get(projectId: string, env: string): Promise<StoredBundle | undefined> {
    const [row] = await read<{ bundle: string; stored_at: string }>(this.pool, "SELECT bundle, stored_at FROM bundles WHERE project_id = $1 AND env = $2", [projectId, env]);
    return row && { bundle: JSON.parse(row.bundle) as Bundle, storedAt: row.stored_at };
  }

  async version(projectId: string, env: string): Promise<string | undefined> {
    const [row] = await read<{ version: string }>(this.pool, "SELECT version FROM bundles WHERE project_id = $1 AND env = $2", [projectId, env]);
    return row?.version;
  }

  async orgsOf(projectId: string): Promise<string[]> {
    const rows = await read<{ org_id: string }>(this.pool, "SELECT DISTINCT org_id FROM bundles WHERE project_id = $1 ORDER BY org_id", [projectId]);
    return rows.map((row) => row.org_id);
  }

  async put(bundle: Bundle, storedAt: string, expectedVersion?: string | null): Promise<boolean> {
    return transaction(this.pool, (tx) => putBundle(tx, bundle, storedAt, expectedVersion));
  }

  async replace(bundle: Bundle, storedAt: string, expectedVersion: string): Promise<boolean> {
    return transaction(this.pool, async (tx) => {
      const result = await run(
        tx,
        `UPDATE bundles SET org_id = $1, version = $2, stored_at = $3, bundle = $4
         WHERE project_id = $5 AND env = $6 AND version = $7`,
        [bundle.orgId, bundle.version, storedAt, JSON.stringify(bundle), bundle.projectId, bundle.env, expectedVersion],
      );
      if (result.rowCount !== 1) return false;
      await recordHistory(tx, bundle, { storedAt, by: "learner" });
      await notifyChange(tx, { kind: "bundle", projectId: bundle.projectId, env: bundle.env });
      return true;
    });
  }

  async list(): Promise<BundleSummary[]> {
    const rows = await read<SummaryRow>(this.pool, "SELECT project_id, env, org_id, version, stored_at FROM bundles ORDER BY project_id, env");
    return rows.map(summary);
  }

  async firstPublications(): Promise<FirstPublication[]> {
    const rows = await read<{ project_id: string; env: string; org_id: string; first_stored_at: string }>(this.pool, "SELECT project_id, env, org_id, first_stored_at FROM published_envs");
    return rows.map((row) => ({ orgId: row.org_id, projectId: row.project_id, env: row.env, storedAt: row.first_stored_at }));
  }

  async history(projectId: string, env: string): Promise<HistoryEntry[]> {
    const rows = await read<SummaryRow & { published_by: PublishedBy }>(
      this.pool,
      "SELECT project_id, env, org_id, version, stored_at, published_by FROM bundle_history WHERE project_id = $1 AND env = $2 ORDER BY seq DESC",
      [projectId, env],
    );
    return rows.map((row) => ({ ...summary(row), by: row.published_by }));
  }

  async historyVersion(projectId: string, env: string, version: string): Promise<StoredBundle | undefined> {
    const [row] = await read<{ bundle: string; stored_at: string }>(
      this.pool,
      "SELECT bundle, stored_at FROM bundle_history WHERE project_id = $1 AND env = $2 AND version = $3",
      [projectId, env, version],
    );
    return row && { bundle: JSON.parse(row.bundle) as Bundle, storedAt: row.stored_at };
  }
}

/**
 * Stores the bundle, its history entry and the pruning; call it inside a transaction. The project
 * is locked first (its first bundle has no row to lock yet), so two servers cannot give one
 * project to two orgs, nor both replace the same `expectedVersion` (BundleStore.put); its rows
 * are locked too, so the learner's replace() cannot slip in between the check and the write.
 */
export async function putBundle(tx: Queryable, bundle: Bundle, storedAt: string, expectedVersion?: string | null): Promise<boolean> {
  const { projectId, env, orgId, version } = bundle;
  await run(tx, "SELECT pg_advisory_xact_lock($1, hashtext($2))", [PROJECT_LOCKS, projectId]);
  const owners = (await run<{ org_id: string; env: string; version: string }>(tx, "SELECT org_id, env, version FROM bundles WHERE project_id = $1 FOR UPDATE", [projectId])).rows;
  const owner = owners.find((row) => row.org_id !== orgId);
  if (owner !== undefined) throw new ProjectOwnedElsewhere(projectId, owner.org_id);
  if (expectedVersion !== undefined && (owners.find((row) => row.env === env)?.version ?? null) !== expectedVersion) return false;
  await run(
    tx,
    `INSERT INTO bundles (project_id, env, org_id, version, stored_at, bundle) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (project_id, env) DO UPDATE SET org_id = EXCLUDED.org_id, version = EXCLUDED.version,
       stored_at = EXCLUDED.stored_at, bundle = EXCLUDED.bundle`,
    [projectId, env, orgId, version, storedAt, JSON.stringify(bundle)],
  );
  // The env's first bundle: a later one keeps it (parquet/partitions.ts decides folders by it).
  await run(tx, "INSERT INTO published_envs (project_id, env, org_id, first_stored_at) VALUES ($1, $2, $3, $4) ON CONFLICT (project_id, env) DO NOTHING", [projectId, env, orgId, storedAt]);
  await recordHistory(tx, bundle, { storedAt, by: "operator" });
  await notifyChange(tx, { kind: "bundle", projectId, env });
  return true;
}

/** The history entry and the pruning (the newest BUNDLE_HISTORY_LIMIT of each publisher); inside a transaction. */
async function recordHistory(tx: Queryable, bundle: Bundle, how: { storedAt: string; by: PublishedBy }): Promise<void> {
  const { projectId, env, orgId, version } = bundle;
  // Publishing a stored version again (an unchanged import) moves it to the front: a new seq.
  await run(tx, "DELETE FROM bundle_history WHERE project_id = $1 AND env = $2 AND version = $3", [projectId, env, version]);
  await run(
    tx,
    "INSERT INTO bundle_history (project_id, env, version, org_id, stored_at, bundle, published_by) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    [projectId, env, version, orgId, how.storedAt, JSON.stringify(bundle), how.by],
  );
  await run(
    tx,
    `DELETE FROM bundle_history WHERE project_id = $1 AND env = $2 AND published_by = $4 AND seq NOT IN
       (SELECT seq FROM bundle_history WHERE project_id = $1 AND env = $2 AND published_by = $4 ORDER BY seq DESC LIMIT $3)`,
    [projectId, env, BUNDLE_HISTORY_LIMIT, how.by],
  );
}

function summary(row: SummaryRow): BundleSummary {
  return { orgId: row.org_id, projectId: row.project_id, env: row.env, version: row.version, storedAt: row.stored_at };
}
