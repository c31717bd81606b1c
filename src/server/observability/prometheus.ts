// The service's metrics in Prometheus text format (prom-client, Node only): what the app reports
// through ServiceMetrics, plus what is read at each scrape: the bundles served, the learner's lag
// behind the event log and its decisions per adaptive policy and arm, and Node's process metrics.
// Labels are bounded: route patterns, statuses, outcomes, store operations, and the projects,
// envs, policies and arms of the bundles an operator imported; never a key, a unit or a decision id.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { LearnerProgress } from "../../adaptive/learner.js";
import type { LearnedStateSource } from "../../adaptive/state.js";
import { DELAYS } from "../../adaptive/state.js";
import { count } from "../../adaptive/stats.js";
import { PARQUET_PIPELINE } from "../../store/parquet/pipeline.js";
import type { EventStore } from "../../store/types.js";
import { clusterScrape } from "./cluster-metrics.js";
import type { EventOutcome, RequestSample, ServedBundle, ServiceMetrics } from "./types.js";

const OUTCOMES: readonly EventOutcome[] = ["accepted", "duplicate", "invalid", "refused"];

/**
 * prom-client's gauges named like counters, which `promtool check metrics` refuses; their
 * per-type versions (nodejs_active_handles and the like) stay.
 */
const MISNAMED_DEFAULTS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/** Seconds: resolve answers in well under a millisecond, a stalled store in seconds. */
const LATENCY_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export interface PrometheusOptions {
  /** Node's own process metrics (CPU, memory, event loop lag, GC). */
  readonly processMetrics?: boolean;
  /**
   * A `--workers` worker: a scrape answers the totals over every worker (cluster-metrics.ts).
   * Counters and histograms are summed; each gauge says how it is merged (its `aggregator`).
   */
  readonly acrossWorkers?: boolean;
}

/** The log's end: an empty append stores nothing and returns the last stored seq (EventStore's contract). */
async function logEnd(events: EventStore): Promise<number> {
  return (await events.append([])).lastSeq;
}

export class PrometheusMetrics implements ServiceMetrics {
  readonly registry = new Registry();
  private readonly bundleSources: (() => Iterable<ServedBundle>)[] = [];
  private readonly requests: Histogram<"method" | "route" | "status">;
  private readonly rateLimits: Counter<"route">;
  private readonly staleServes: Counter<"route">;
  private readonly eventCounts: Counter<"outcome">;
  private readonly storeErrors: Counter<"store" | "operation">;
  private readonly streamsRefused: Counter<"reason">;
  private readonly scrapeAll?: () => Promise<{ contentType: string; body: string }>;

  constructor(options: PrometheusOptions = {}) {
    const registers = [this.registry];
    this.requests = new Histogram({ name: "vane_http_request_duration_seconds", help: "HTTP requests by method, route pattern and status, with their duration", labelNames: ["method", "route", "status"], buckets: LATENCY_BUCKETS_S, registers });
    this.rateLimits = new Counter({ name: "vane_rate_limited_total", help: "Requests refused with 429 by an API key's rate limit, by route pattern", labelNames: ["route"], registers });
    this.staleServes = new Counter({ name: "vane_bundle_stale_serves_total", help: "Answers served from a stale bundle while the bundle store could not be read, by route pattern", labelNames: ["route"], registers });
    this.eventCounts = new Counter({ name: "vane_events_total", help: "Events sent to /v1/events by outcome: accepted (stored), duplicate (a resend, not stored again), invalid (refused one by one), refused (in a batch answered 503, not stored)", labelNames: ["outcome"], registers });
    this.storeErrors = new Counter({ name: "vane_store_errors_total", help: "Store calls that failed, by store and operation", labelNames: ["store", "operation"], registers });
    this.streamsRefused = new Counter({ name: "vane_streams_refused_total", help: "Event streams (GET /ofrep/v1/changes) refused with 503, by reason: open_files (the process near its open-file limit)", labelNames: ["reason"], registers });
    this.streamsRefused.inc({ reason: "open_files" }, 0);
    for (const outcome of OUTCOMES) this.eventCounts.inc({ outcome }, 0); // every series from the first scrape
    const bundleSources = this.bundleSources;
    new Gauge({
      name: "vane_bundle_info",
      help: "The bundle version served now for each project and env (value 1)",
      labelNames: ["project", "env", "version"],
      registers,
      aggregator: "max", // 1 per version any worker serves
      collect() {
        this.reset();
        for (const source of bundleSources) for (const b of source()) this.set({ project: b.projectId, env: b.env, version: b.version }, 1);
      },
    });
    if (options.processMetrics === true) {
      collectDefaultMetrics({ register: this.registry });
      for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
    }
    if (options.acrossWorkers === true) this.scrapeAll = clusterScrape(this.registry);
  }

  /** Learner lag (behind the end of `events`, the log it reads) and its decisions per policy and arm. */
  watchLearner(learner: Pick<LearnedStateSource, "state"> & { progress(): Pick<LearnerProgress, "position" | "skippedUpdates"> }, events: EventStore): void {
    const registers = [this.registry];
    new Gauge({
      name: "vane_learner_lag_events",
      help: "Events in the log the learner has not read yet (the log's last seq minus the learner's position); NaN while the log cannot be read",
      registers,
      aggregator: "min", // the learning worker's: the others mirror its position, a second later
      async collect() {
        // A store that cannot be read makes the lag unknown (NaN) rather than failing the scrape,
        // whose store error counters matter most just then.
        const end = await logEnd(events).catch(() => undefined);
        this.set(end === undefined ? Number.NaN : Math.max(0, end - learner.progress().position));
      },
    });
    new Gauge({
      name: "vane_learner_decisions",
      help: "Decisions the learner has counted per adaptive policy and arm (its population trials)",
      labelNames: ["project", "env", "policy", "arm"],
      registers,
      aggregator: "max", // the learning worker's: the others mirror its state, a second later
      collect() {
        this.reset();
        for (const { projectId, env, policyId, state } of learner.state.entries()) {
          for (const [arm, stats] of state.population) {
            if (arm !== DELAYS) this.set({ project: projectId, env, policy: policyId, arm }, count(stats));
          }
        }
      },
    });
    // The learners' count of their committed steps (they log only the first), from when this
    // registry started watching; a server that follows counts none.
    let skippedReported = learner.progress().skippedUpdates;
    new Counter({
      name: "vane_learner_skipped_updates_total",
      help: "Updates of an arm's statistics (a decision's trial or its reward, the population's and an entity's each) skipped because a logged context value or reward would make them overflow; the events stay stored",
      registers,
      collect() {
        const skipped = learner.progress().skippedUpdates;
        if (skipped > skippedReported) this.inc(skipped - skippedReported);
        skippedReported = skipped;
      },
    });
  }

  /** How far the Parquet archive is behind the log: read from the store at each scrape, so every server reports it, lease or not. */
  watchArchive(events: EventStore): void {
    const registers = [this.registry];
    new Gauge({
      name: "vane_archive_lag_events",
      help: "Events in the log the Parquet archive does not hold yet (the log's last seq minus the copy's checkpoint); NaN while the log cannot be read",
      registers,
      async collect() {
        const lag = await Promise.all([logEnd(events), events.checkpoint(PARQUET_PIPELINE)]).catch(() => undefined);
        this.set(lag === undefined ? Number.NaN : Math.max(0, lag[0] - lag[1]));
      },
    });
    new Gauge({
      name: "vane_archive_lag_seconds",
      help: "Seconds since the server received the oldest event the Parquet archive does not hold yet (0 when it holds every one); NaN while the log cannot be read",
      registers,
      async collect() {
        const oldest = await events
          .checkpoint(PARQUET_PIPELINE)
          .then((through) => events.readAfter(through, 1))
          .catch(() => undefined);
        const receivedMs = oldest?.[0] === undefined ? undefined : Date.parse(oldest[0].event.receivedAt);
        this.set(oldest === undefined ? Number.NaN : receivedMs === undefined ? 0 : Math.max(0, (Date.now() - receivedMs) / 1000));
      },
    });
  }

  request(sample: RequestSample): void {
    this.requests.observe({ method: sample.method, route: sample.route, status: String(sample.status) }, sample.seconds);
  }

  rateLimited(route: string): void {
    this.rateLimits.inc({ route });
  }

  staleBundle(route: string): void {
    this.staleServes.inc({ route });
  }

  events(outcome: EventOutcome, n: number): void {
    if (n > 0) this.eventCounts.inc({ outcome }, n);
  }

  streamRefused(reason: "open_files"): void {
    this.streamsRefused.inc({ reason });
  }

  storeError(store: string, operation: string): void {
    this.storeErrors.inc({ store, operation });
  }

  watchBundles(served: () => Iterable<ServedBundle>): void {
    this.bundleSources.push(served);
  }

  async scrape(): Promise<{ contentType: string; body: string }> {
    if (this.scrapeAll !== undefined) return this.scrapeAll();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
