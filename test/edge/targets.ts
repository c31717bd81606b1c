// One HTTP contract suite, three targets: the Node app on SQLite (test/server/harness.ts), the Node
// server on a PostgreSQL of its own, and the Worker in workerd (`vane edge dev`'s startLocalEdge on
// the built dist/edge/). A suite sets up keys and
// bundles through each target's admin API (as `vane … --remote` does) and reads what was stored
// through `stores`; on the edge those are the Worker's own D1 and KV, reached from Node through
// miniflare. Events reach the edge's D1 through a queue, in order: a test waits for the events it
// looks for (or for a later marker event), not for the queue to look idle.
import type { Bundle } from "../../src/bundle/types.js";
import { startLocalEdge, type LocalEdge } from "../../src/edge/local.js";
import type { KeyInput } from "../../src/server/auth/api-key.js";
import type { BundleStore, EventStore, KeyKind, KeyStore, Stores } from "../../src/store/types.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNodeServer } from "../../src/server/node.js";
import { openPostgresStores } from "../../src/store/postgres/open.js";
import { startTestServer } from "../server/harness.js";
import { startPostgres } from "../services/postgres.js";

export type TargetName = "node" | "postgres" | "edge";
/** The Node app on SQLite, `vane serve`'s server on a PostgreSQL of its own, and the Worker in workerd. */
export const TARGETS: readonly TargetName[] = ["node", "postgres", "edge"];

export interface ContractTarget {
  readonly name: TargetName;
  readonly url: string;
  readonly stores: { readonly keys: KeyStore; readonly bundles: BundleStore; readonly events: EventStore };
  /** The target's time (the Node app's test clock; the Worker's is the real one). */
  now(): number;
  /** Stores a new key and returns its secret. */
  key(input: Omit<KeyInput, "key"> & { kind?: KeyKind }): Promise<string>;
  putBundle(bundle: Bundle): Promise<void>;
  close(): Promise<void>;
}

export function startTarget(name: TargetName): Promise<ContractTarget> {
  return name === "node" ? nodeTarget() : name === "postgres" ? postgresTarget() : edgeTarget();
}

/** The Node server `vane serve --store postgres://…` runs, on a private PostgreSQL started for it. */
async function postgresTarget(): Promise<ContractTarget> {
  const pg = await startPostgres();
  try {
    const storeUrl = await pg.createDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "vane-contract-pg-"));
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, storeUrl, adminToken: ADMIN_TOKEN, limits: { bundleRefreshMs: 0, keyCacheMs: 0 } });
    const stores = await openPostgresStores({ url: storeUrl });
    return {
      name: "postgres",
      url: server.url,
      stores,
      now: () => Date.now(),
      ...adminSetup(server.url),
      close: async () => {
        await server.close();
        await stores.close();
        await pg.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await pg.stop();
    throw error;
  }
}

async function nodeTarget(): Promise<ContractTarget> {
  const server = await startTestServer({ adminToken: ADMIN_TOKEN });
  return {
    name: "node",
    url: server.url,
    stores: server.stores,
    now: () => server.clock.now(),
    ...adminSetup(server.url),
    close: () => server.close(),
  };
}

/** Both targets are set up as a deployment without a shell is: keys and bundles through the admin API (what `vane … --remote` calls). */
export const ADMIN_TOKEN = "contract-suite-admin-token-0123456789abcdef";

export function adminSetup(url: string): Pick<ContractTarget, "key" | "putBundle"> {
  const admin = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${url}/admin/v1/${path}`, { method: "POST", headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const answer = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`POST /admin/v1/${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  return {
    key: async ({ kind = "sk", ...input }) => (await admin("keys", { kind, ...input })).secret as string,
    putBundle: async (bundle) => void (await admin("bundles", { bundle })),
  };
}

/** The Worker's own stores, reached from Node through miniflare: what the tests read back (never how they set up). */
export const seedEdge = (edge: LocalEdge): Promise<Stores> => edge.stores();

/** The Worker rereads bundles and keys at every request, as the Node test server does. */
export const FRESH = { VANE_BUNDLE_REFRESH_MS: "0", VANE_KEY_CACHE_MS: "0" };

/**
 * The learner object's first weights pass comes a minute after it starts and publishes a bundle
 * version stamped now, later than the versions these suites publish: under load a suite runs past
 * that minute and its next publication is refused as not newer. The suites here publish alone;
 * the learner's publication is tested in weights.test.ts.
 */
const NO_WEIGHTS_PASS = { VANE_WEIGHTS_EVERY_MS: String(7 * 24 * 60 * 60_000) };

async function edgeTarget(): Promise<ContractTarget> {
  const edge = await startLocalEdge({ port: 0, host: "127.0.0.1", vars: { ...FRESH, ...NO_WEIGHTS_PASS }, adminToken: ADMIN_TOKEN });
  const stores = await seedEdge(edge);
  return {
    name: "edge",
    url: edge.url,
    stores,
    now: () => Date.now(),
    ...adminSetup(edge.url),
    close: () => edge.close(),
  };
}
