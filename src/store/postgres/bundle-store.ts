// Config bundles, one per project and env, stored as JSON text next to the columns that find
// them, and the versions put() published (bundle_history), the newest BUNDLE_HISTORY_LIMIT kept.
import type { ISql, Sql } from "postgres";
import { notifyChange } from "./changes.js";
import type { Bundle } from "../../bundle/types.js";
import { ProjectOwnedElsewhere } from "../tenancy.js";
import { BUNDLE_HISTORY_LIMIT, type BundleStore, type BundleSummary, type StoredBundle } from "../types.js";

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
  constructor(private readonly sql: Sql) {}

  async get(projectId: string, env: string): Promise<StoredBundle | undefined> {
    const [row] = await this.sql<{ bundle: string; stored_at: string }[]>`
      SELECT bundle, stored_at FROM bundles WHERE project_id = ${projectId} AND env = ${env}`;
    return row && { bundle: JSON.parse(row.bundle) as Bundle, storedAt: row.stored_at };
  }

  async version(projectId: string, env: string): Promise<string | undefined> {
    const [row] = await this.sql<{ version: string }[]>`SELECT version FROM bundles WHERE project_id = ${projectId} AND env = ${env}`;
    return row?.version;
  }

  async orgsOf(projectId: string): Promise<string[]> {
    const rows = await this.sql<{ org_id: string }[]>`SELECT DISTINCT org_id FROM bundles WHERE project_id = ${projectId} ORDER BY org_id`;
    return rows.map((row) => row.org_id);
  }

  async put(bundle: Bundle, storedAt: string): Promise<void> {
    await this.sql.begin((tx) => putBundle(tx, bundle, storedAt));
  }

  async replace(bundle: Bundle, storedAt: string, expectedVersion: string): Promise<boolean> {
    return this.sql.begin(async (tx) => {
      const result = await tx`
        UPDATE bundles SET org_id = ${bundle.orgId}, version = ${bundle.version}, stored_at = ${storedAt}, bundle = ${JSON.stringify(bundle)}
        WHERE project_id = ${bundle.projectId} AND env = ${bundle.env} AND version = ${expectedVersion}`;
      if (result.count !== 1) return false;
      await notifyChange(tx, { kind: "bundle", projectId: bundle.projectId, env: bundle.env });
      return true;
    });
  }

  async list(): Promise<BundleSummary[]> {
    const rows = await this.sql<SummaryRow[]>`SELECT project_id, env, org_id, version, stored_at FROM bundles ORDER BY project_id, env`;
    return rows.map(summary);
  }

  async history(projectId: string, env: string): Promise<BundleSummary[]> {
    const rows = await this.sql<SummaryRow[]>`
      SELECT project_id, env, org_id, version, stored_at FROM bundle_history
      WHERE project_id = ${projectId} AND env = ${env} ORDER BY seq DESC`;
    return rows.map(summary);
  }

  async historyVersion(projectId: string, env: string, version: string): Promise<StoredBundle | undefined> {
    const [row] = await this.sql<{ bundle: string; stored_at: string }[]>`
      SELECT bundle, stored_at FROM bundle_history WHERE project_id = ${projectId} AND env = ${env} AND version = ${version}`;
    return row && { bundle: JSON.parse(row.bundle) as Bundle, storedAt: row.stored_at };
  }
}

/**
 * Stores the bundle, its history entry and the pruning; call it inside a transaction. The project
 * is locked first (its first bundle has no row to lock yet), so two servers cannot give one
 * project to two orgs.
 */
export async function putBundle(tx: ISql, bundle: Bundle, storedAt: string): Promise<void> {
  const { projectId, env, orgId, version } = bundle;
  await tx`SELECT pg_advisory_xact_lock(${PROJECT_LOCKS}, hashtext(${projectId}))`;
  const owners = await tx<{ org_id: string }[]>`SELECT org_id FROM bundles WHERE project_id = ${projectId}`;
  const owner = owners.find((row) => row.org_id !== orgId);
  if (owner !== undefined) throw new ProjectOwnedElsewhere(projectId, owner.org_id);
  const json = JSON.stringify(bundle);
  await tx`
    INSERT INTO bundles (project_id, env, org_id, version, stored_at, bundle)
    VALUES (${projectId}, ${env}, ${orgId}, ${version}, ${storedAt}, ${json})
    ON CONFLICT (project_id, env) DO UPDATE SET org_id = EXCLUDED.org_id, version = EXCLUDED.version,
      stored_at = EXCLUDED.stored_at, bundle = EXCLUDED.bundle`;
  // Publishing a stored version again (an unchanged import) moves it to the front: a new seq.
  await tx`DELETE FROM bundle_history WHERE project_id = ${projectId} AND env = ${env} AND version = ${version}`;
  await tx`
    INSERT INTO bundle_history (project_id, env, version, org_id, stored_at, bundle)
    VALUES (${projectId}, ${env}, ${version}, ${orgId}, ${storedAt}, ${json})`;
  await tx`
    DELETE FROM bundle_history WHERE project_id = ${projectId} AND env = ${env} AND seq NOT IN
      (SELECT seq FROM bundle_history WHERE project_id = ${projectId} AND env = ${env} ORDER BY seq DESC LIMIT ${BUNDLE_HISTORY_LIMIT})`;
  await notifyChange(tx, { kind: "bundle", projectId, env });
}

function summary(row: SummaryRow): BundleSummary {
  return { orgId: row.org_id, projectId: row.project_id, env: row.env, version: row.version, storedAt: row.stored_at };
}
