// One HTTP contract suite, two targets: the Node app (test/server/harness.ts) and the Worker in
// workerd (`vane edge dev`'s startLocalEdge on the built dist/edge/). A suite sets up keys and
// bundles and reads what was stored through `stores`; on the edge those are the Worker's own D1
// and KV, reached from Node through miniflare (seedEdge: the one place to swap for the admin API's
// `--remote` once it lands). Events reach the edge's D1 through a queue: `settled()` waits for it.
import type { Bundle } from "../../src/bundle/types.js";
import { startLocalEdge, type LocalEdge } from "../../src/edge/local.js";
import type { D1Database } from "../../src/store/edge/bindings.js";
import { type KeyInput, generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { BundleStore, EventStore, KeyKind, KeyStore, Stores } from "../../src/store/types.js";
import { nodeSha256, startTestServer } from "../server/harness.js";

export type TargetName = "node" | "edge";
export const TARGETS: readonly TargetName[] = ["node", "edge"];

export interface ContractTarget {
  readonly name: TargetName;
  readonly url: string;
  readonly stores: { readonly keys: KeyStore; readonly bundles: BundleStore; readonly events: EventStore };
  /** The target's time (the Node app's test clock; the Worker's is the real one). */
  now(): number;
  /** Stores a new key and returns its secret. */
  key(input: Omit<KeyInput, "key"> & { kind?: KeyKind }): Promise<string>;
  putBundle(bundle: Bundle): Promise<void>;
  /** Resolves once every event accepted so far can be read from `stores.events`. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export function startTarget(name: TargetName): Promise<ContractTarget> {
  return name === "node" ? nodeTarget() : edgeTarget();
}

async function nodeTarget(): Promise<ContractTarget> {
  const server = await startTestServer();
  return {
    name: "node",
    url: server.url,
    stores: server.stores,
    now: () => server.clock.now(),
    key: (input) => server.key(input),
    putBundle: (bundle) => server.putBundle(bundle),
    settled: async () => undefined,
    close: () => server.close(),
  };
}

/** The Worker's own stores, reached from Node through miniflare: swap for the admin API's `--remote` once it lands. */
export const seedEdge = (edge: LocalEdge): Promise<Stores> => edge.stores();

/** The Worker rereads bundles and keys at every request, as the Node test server does. */
export const FRESH = { VANE_BUNDLE_REFRESH_MS: "0", VANE_KEY_CACHE_MS: "0" };

async function edgeTarget(): Promise<ContractTarget> {
  const edge = await startLocalEdge({ port: 0, host: "127.0.0.1", vars: FRESH });
  const stores = await seedEdge(edge);
  return {
    name: "edge",
    url: edge.url,
    stores,
    now: () => Date.now(),
    async key({ kind = "sk", ...input }) {
      const secret = generateKey(kind);
      await stores.keys.put(toKeyRecord({ ...input, key: secret }, nodeSha256, new Date().toISOString()));
      return secret;
    },
    putBundle: (bundle) => stores.bundles.put(bundle, new Date().toISOString()),
    settled: async () => queueSettled(await edge.database()),
    close: () => edge.close(),
  };
}

const QUIET_MS = 2_500;
const POLL_MS = 250;

/** The queue has delivered what it holds once the stored count stays put past the consumer's batch timeout (1 s). */
export async function queueSettled(db: D1Database): Promise<void> {
  const count = async () => (await db.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>())!.n;
  let last = await count();
  let quietSince = Date.now();
  while (Date.now() - quietSince < QUIET_MS) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const now = await count();
    if (now !== last) [last, quietSince] = [now, Date.now()];
  }
}
