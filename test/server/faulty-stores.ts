// Stores that fail on demand through their interfaces: each method of a store named in `down`
// rejects, as a store whose database went away would.
import type { BundleStore, EventStore, KeyStore, LearningStore, LeaseStore, Stores } from "../../src/store/types.js";

export type StoreName = "bundles" | "keys" | "events" | "learning" | "leases";

export class FaultyStores implements Stores {
  readonly down = new Set<StoreName>();
  readonly bundles: BundleStore;
  readonly keys: KeyStore;
  readonly events: EventStore;
  readonly learning: LearningStore;
  readonly leases: LeaseStore;

  constructor(private readonly inner: Stores) {
    this.bundles = this.guard("bundles", inner.bundles);
    this.keys = this.guard("keys", inner.keys);
    this.events = this.guard("events", inner.events);
    this.learning = this.guard("learning", inner.learning);
    this.leases = this.guard("leases", inner.leases);
  }

  async health() {
    const health = await this.inner.health();
    for (const name of this.down) health[name] = "down";
    return health;
  }

  private guard<T extends object>(name: StoreName, store: T): T {
    return new Proxy(store, {
      get: (target, property, receiver) => {
        const value = Reflect.get(target, property, receiver) as unknown;
        // Subscribing is not a store call: it cannot fail, only what it is fed can.
        if (typeof value !== "function" || property === "onCommitted") return value;
        return (...args: unknown[]) =>
          this.down.has(name) ? Promise.reject(new Error(`injected fault: ${name} store down`)) : (value as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
  }
}
