// Wires learning into the server: the learner reads policies from bundles through its own bundle
// cache (a store outage fails the step, which retries, rather than skipping events), and takes the
// events this process commits from memory (the event store's onCommitted feed).
import { adaptiveCatalog } from "../adaptive/policy.js";
import { Learner } from "../adaptive/learner.js";
import type { Engine } from "../engine/engine.js";
import type { Stores } from "../store/types.js";
import { BundleCache } from "./bundle-cache.js";
import type { Clock } from "./clock.js";

export interface LearnerDeps {
  readonly stores: Stores;
  readonly engine: Engine;
  readonly clock: Clock;
  /** Pending decisions held in memory at most (the learner's default when absent). */
  readonly maxPendingInMemory?: number;
}

export function createLearner(deps: LearnerDeps): Learner {
  const bundles = new BundleCache({ bundles: deps.stores.bundles, engine: deps.engine, clock: deps.clock, refreshMs: 1000, staleMs: 0 });
  return new Learner({
    store: deps.stores.learning,
    now: () => deps.clock.now(),
    maxPendingInMemory: deps.maxPendingInMemory,
    feed: (listener) => deps.stores.events.onCommitted(listener),
    catalogs: async ({ orgId, projectId, env }) => {
      const found = await bundles.lookup(projectId, env);
      if (found.status === "unavailable") throw new Error(`bundle store unavailable for ${projectId}/${env}`);
      return found.status === "found" && found.entry.bundle.orgId === orgId ? adaptiveCatalog(found.entry.compiled) : undefined;
    },
  });
}
