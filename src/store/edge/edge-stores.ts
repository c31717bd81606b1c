// The Stores of a Worker: keys, bundles, events and what the learner keeps, on D1, KV, R2 and a
// Queue (bindings.ts). The leases of the Node server's roles are not kept here: at the edge a role
// needs none (the queue consumer and the Durable Objects are Cloudflare's to place), so they
// refuse with a message that says so.
import type { LeaseStore, Stores, StoreHealth } from "../types.js";
import type { D1Database, KVNamespace, Queue, R2Bucket } from "./bindings.js";
import { D1BundleStore } from "./d1-bundle-store.js";
import { D1KeyStore } from "./d1-key-store.js";
import { D1LearningStore } from "./d1-learning-store.js";
import { type EventMessage, QueuedEventStore } from "./queued-event-store.js";

/** The bindings wrangler.toml declares (src/edge/wrangler-config.ts), by their names there. */
export interface StoreBindings {
  readonly DB: D1Database;
  readonly CONFIG: KVNamespace;
  readonly ARCHIVE: R2Bucket;
  readonly EVENTS: Queue<EventMessage>;
}

function notAtTheEdge<T extends object>(what: string): T {
  const refuse = () => Promise.reject(new Error(`${what} is not kept in the edge stores`));
  return new Proxy({}, { get: () => refuse }) as T;
}

/** The Worker's stores; its events answer their reads themselves (no DuckDB at the edge). */
export function edgeStores(bindings: StoreBindings, newId: () => string): Stores & { readonly events: QueuedEventStore } {
  return {
    keys: new D1KeyStore(bindings.DB),
    bundles: new D1BundleStore(bindings.DB, bindings.CONFIG),
    events: new QueuedEventStore(bindings.DB, bindings.EVENTS, bindings.ARCHIVE, newId),
    learning: new D1LearningStore(bindings.DB),
    leases: notAtTheEdge<LeaseStore>("a lease"),
    // The Node server's names, all three on the one D1 database (whether the Queue takes events shows only when it refuses one).
    async health(): Promise<Record<string, StoreHealth>> {
      const d1 = await bindings.DB.prepare("SELECT 1 FROM keys LIMIT 1").first().then(
        () => "ok" as const,
        () => "down" as const,
      );
      return { bundles: d1, keys: d1, events: d1 };
    },
  };
}
