// The admin operations through a server's admin API: each one request, answered as the server's
// own operations over its stores answer it (src/server/admin/local-operations.ts).
import type { AdminOperations, CreatedKey, Imported, PublicKey, Published, Revocation, Rotation } from "../../server/admin/operations.js";
import type { DiscoveredEvent, SequencedEvent } from "../../store/types.js";
import type { AdminClient } from "./admin-client.js";

const query = (params: Record<string, string | number | undefined>) => {
  const given = Object.entries(params).filter((entry): entry is [string, string | number] => entry[1] !== undefined);
  return given.length === 0 ? "" : `?${new URLSearchParams(given.map(([k, v]) => [k, String(v)])).toString()}`;
};

export function remoteOperations(client: AdminClient): AdminOperations {
  const where = (project: string, env: string) => `bundles/${encodeURIComponent(project)}/${encodeURIComponent(env)}`;
  return {
    publishBundle: (bundle, how) => client.call<Published>("POST", "bundles", { bundle, rollback: how.rollback === true, ...(how.base !== undefined && { base: how.base }) }),
    rollbackBundle: (at, version) => client.call<Published>("POST", `${where(at.project, at.env)}/rollback`, { version }),
    createKey: (request) => client.call<CreatedKey>("POST", "keys", request),
    listKeys: async () => (await client.call<{ keys: PublicKey[] }>("GET", "keys")).keys,
    findKey: async (id) => (await client.find<{ key: PublicKey }>(`keys/${encodeURIComponent(id)}`))?.key,
    revokeKey: (id) => client.call<Revocation>("POST", `keys/${encodeURIComponent(id)}/revoke`),
    rotateKey: (id) => client.call<Rotation>("POST", `keys/${encodeURIComponent(id)}/rotate`),
    importFile: (raw) => client.call<Imported>("POST", "import", raw),
    countEvents: async (f) => (await client.call<{ count: number }>("GET", `events/count${query({ org: f.orgId, project: f.projectId, type: f.type })}`)).count,
    listEvents: async (f) =>
      (await client.call<{ events: SequencedEvent[] }>("GET", `events${query({ org: f.orgId, project: f.projectId, type: f.type, limit: f.limit })}`)).events,
    discoveredEvents: async () => (await client.call<{ discovered: DiscoveredEvent[] }>("GET", "events/discovered")).discovered,
  };
}
