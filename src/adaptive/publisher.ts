// Publishes learned arm weights into the served bundles (decisions.md §6, issue 5 §4): for each
// stored bundle with adaptive policies, the weights are recomputed from the population's state;
// when any arm moved by at least `threshold`, and the learner's last publication for that
// project and env is at least `minIntervalMs` old, a new bundle version carrying them replaces
// the stored one — only if nobody replaced it meanwhile (compare and set on the version). Every
// version is a full download for every polling client (a 200 instead of a 304), hence both
// bounds (issue 32). The last publication's time is read from the bundle history, where the store
// records each one as the learner's: it holds across restarts and across servers taking the role.
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
  /** Least time between two of the learner's publications for one project and env. */
  readonly minIntervalMs?: number;
}

/** Monte Carlo propensities (Thompson) jitter by about 0.005 between passes: 0.05 is a real shift of traffic. */
export const DEFAULT_WEIGHT_THRESHOLD = 0.05;
export const DEFAULT_PUBLISH_INTERVAL_MS = 10 * 60_000;

export interface Publication {
  readonly projectId: string;
  readonly env: string;
  readonly version: string;
}

export class WeightsPublisher {
  private held = 0;
  /**
   * Per project and env, what the last pass weighed and found unmoved: the bundle's version and
   * its policies' state versions. Weighing again costs a compile and Monte Carlo draws (about 14 M
   * instructions with the bench bundle, once a minute on an idle server); with the same bundle,
   * the same learned state and no open trial (whose expected outcomes move with time) it would
   * find the same.
   */
  private readonly unmoved = new Map<string, string>();

  constructor(private readonly options: PublisherOptions) {}

  /** Projects and envs the last pass skipped because the learner published for them within the interval: a later pass is owed them. */
  get waiting(): number {
    return this.held;
  }

  /**
   * One pass over the stored bundles; returns the versions it published. A bundle whose weighing
   * fails (its engine refuses a policy's state) does not hold up the bundles after it, which are
   * often other tenants': the pass goes on, then throws the failures together for the caller to
   * report (the versions it published are stored all the same).
   */
  async publish(): Promise<Publication[]> {
    const published: Publication[] = [];
    const failures: Error[] = [];
    this.held = 0;
    for (const summary of await this.options.bundles.list()) {
      try {
        const publication = await this.publishOne(summary.projectId, summary.env);
        if (publication !== undefined) published.push(publication);
      } catch (error) {
        failures.push(new Error(`weights for ${summary.projectId}/${summary.env}: ${error instanceof Error ? error.message : String(error)}`, { cause: error }));
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `weights publication failed for ${failures.length} bundle(s): ${failures.map((f) => f.message).join("; ")}`);
    return published;
  }

  /** The pass for one project and env: the version it published, if it did. */
  private async publishOne(projectId: string, env: string): Promise<Publication | undefined> {
    if (!(await this.due(projectId, env))) {
      this.held += 1;
      return undefined;
    }
    const stored = await this.options.bundles.get(projectId, env);
    if (!stored) return undefined;
    const key = `${projectId}\u0000${env}`;
    const weighed = this.fingerprint(stored.bundle);
    if (weighed !== undefined && this.unmoved.get(key) === weighed) return undefined;
    const next = this.reweighted(stored.bundle);
    if (!next) {
      if (weighed !== undefined) this.unmoved.set(key, weighed);
      return undefined;
    }
    this.unmoved.delete(key);
    const storedAt = new Date(this.options.now()).toISOString();
    if (!(await this.options.bundles.replace(next, storedAt, stored.bundle.version))) return undefined;
    return { projectId: next.projectId, env: next.env, version: next.version };
  }

  /** Whether the learner's last publication for this project and env is old enough for another. */
  private async due(projectId: string, env: string): Promise<boolean> {
    const last = (await this.options.bundles.history(projectId, env)).find((entry) => entry.by === "learner");
    return last === undefined || this.options.now() - Date.parse(last.storedAt) >= (this.options.minIntervalMs ?? DEFAULT_PUBLISH_INTERVAL_MS);
  }

  /** The bundle's version and its policies' learned-state versions; undefined while any has open trials. */
  private fingerprint(bundle: Bundle): string | undefined {
    const { state } = this.options.learned;
    let versions = bundle.version;
    for (const layer of bundle.layers) {
      for (const policy of layer.policies) {
        if (policy.kind === "static" || policy.state !== "running") continue; // as adaptiveCatalog: no learned state
        const learned = state.policy(bundle.projectId, bundle.env, policy.id);
        for (const trials of learned.open.values()) if (trials.bins(this.options.now())[Symbol.iterator]().next().done !== true) return undefined;
        versions += ` ${learned.version}`;
      }
    }
    return versions;
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
