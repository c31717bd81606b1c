// Changes to bundles and keys told to every server at once (LISTEN/NOTIFY). The notification is
// sent inside the writing transaction, so PostgreSQL delivers it only if and once that commits.
import type { ISql, Sql } from "postgres";
import type { ChangeFeed, StoreChange } from "../types.js";

export const CHANGES_CHANNEL = "vane_changes";

export async function notifyChange(sql: ISql, change: StoreChange): Promise<void> {
  await sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${JSON.stringify(change)})`;
}

function parseChange(payload: string): StoreChange | undefined {
  try {
    const change = JSON.parse(payload) as Partial<Record<string, unknown>>;
    if (change.kind === "bundle" && typeof change.projectId === "string" && typeof change.env === "string") return { kind: "bundle", projectId: change.projectId, env: change.env };
    if (change.kind === "key" && typeof change.secretHash === "string") return { kind: "key", secretHash: change.secretHash };
  } catch {
    // Not ours (another program on the channel): ignored.
  }
  return undefined;
}

export class PostgresChangeFeed implements ChangeFeed {
  constructor(private readonly sql: Sql) {}

  async listen(listener: (change: StoreChange) => void): Promise<() => Promise<void>> {
    // postgres.js listens on a connection of its own and listens again after a reconnect.
    const { unlisten } = await this.sql.listen(CHANGES_CHANNEL, (payload) => {
      const change = parseChange(payload);
      if (change !== undefined) listener(change);
    });
    return unlisten;
  }
}
