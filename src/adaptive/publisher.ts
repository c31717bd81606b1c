// Publishes learned arm weights into the served bundles (decisions.md §6, issue 5 §4): for each
// stored bundle with adaptive policies, the weights are recomputed from the population's state;
// when any arm moved by at least `threshold`, a new bundle version carrying them replaces the
// stored one — only if nobody replaced it meanwhile (compare and set on the version).
import { compileBundle } from "../bundle/compile.js";
import type { Bundle } from "../bundle/types.js";
import type { Engine } from "../engine/engine.js";
import type { BundleStore } from "../store/types.js";
import { armPropensities } from "./choose.js";
import type { LearnedStateSource } from "./state.js";
import { adaptiveCatalog } from "./policy.js";
import { publishedWeights, weightsMoved } from "./weights.js";

export interface PublisherOptions {
  readonly bundles: BundleStore;
  /** Read at each pass: the learning server's own state. */
  readonly learned: Pick<LearnedStateSource, "state">;
  readonly engine: Engine;
  readonly now: () => number;
  /** Smallest change of any arm's weight worth a new version. */
  readonly threshold?: number;
}

export const DEFAULT_WEIGHT_THRESHOLD = 0.01;

export interface Publication {
  readonly projectId: string;
  readonly env: string;
  readonly version: string;
}

export class WeightsPublisher {
  constructor(private readonly options: PublisherOptions) {}

  /** One pass over the stored bundles; returns the versions it published. */
  async publish(): Promise<Publication[]> {
    const published: Publication[] = [];
    for (const summary of await this.options.bundles.list()) {
      const stored = await this.options.bundles.get(summary.projectId, summary.env);
      if (!stored) continue;
      const next = this.reweighted(stored.bundle);
      if (!next) continue;
      const storedAt = new Date(this.options.now()).toISOString();
      if (await this.options.bundles.replace(next, storedAt, stored.bundle.version)) {
        published.push({ projectId: next.projectId, env: next.env, version: next.version });
      }
    }
    return published;
  }

  /** The bundle with fresh weights and a new version, or undefined when no weight moved enough. */
  private reweighted(bundle: Bundle): Bundle | undefined {
    const { engine } = this.options;
    const { state } = this.options.learned;
    const catalog = adaptiveCatalog(compileBundle(bundle, engine));
    if (catalog.size === 0) return undefined;
    const fresh = new Map<string, number[]>();
    for (const policy of catalog.values()) {
      const learned = state.policy(bundle.projectId, bundle.env, policy.id);
      const arms = learned.populationArms(policy, this.options.now());
      const propensities = armPropensities(engine, policy, arms, learned.recentContexts);
      const weights = publishedWeights(propensities, learned.decisionCounts(policy), policy.params);
      if (weightsMoved(currentWeights(bundle, policy.id), weights, this.options.threshold ?? DEFAULT_WEIGHT_THRESHOLD)) {
        fresh.set(policy.id, weights);
      }
    }
    if (fresh.size === 0) return undefined;
    return {
      ...bundle,
      version: nextVersion(bundle.version, this.options.now()),
      layers: bundle.layers.map((layer) => ({
        ...layer,
        policies: layer.policies.map((p) => (fresh.has(p.id) ? { ...p, weights: fresh.get(p.id)! } : p)),
      })),
    };
  }
}

/** The weights as the bundle states them; an equal split when absent. */
function currentWeights(bundle: Bundle, policyId: string): number[] | undefined {
  for (const layer of bundle.layers) {
    const policy = layer.policies.find((p) => p.id === policyId);
    if (policy) return policy.weights ?? policy.allocations.map(() => 1 / policy.allocations.length);
  }
  return undefined;
}

/** Bundle versions are ISO 8601 times: the publication's, kept later than the one it replaces. */
export function nextVersion(current: string, nowMs: number): string {
  const previous = Date.parse(current);
  return new Date(Number.isFinite(previous) && previous >= nowMs ? previous + 1 : nowMs).toISOString();
}
