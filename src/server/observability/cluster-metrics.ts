// `vane serve --workers N --metrics …`: a scrape reaches whichever worker the primary hands the
// connection to, so each worker answers with the totals of all of them, which the primary sums.
// The worker that took the scrape asks the primary; the primary asks every worker that listens
// for its registry as JSON and merges them with prom-client's AggregatorRegistry.aggregate (each
// metric by its `aggregator`: sums for counters and histograms, see prometheus.ts for gauges).
// A worker that dies takes its counts with it: its replacement starts from zero, which a
// Prometheus rate() reads as a counter reset.
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from "prom-client";

type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

/** Worker → primary: "sum everyone's", and a worker's own registry when asked. */
type MetricsToPrimary = { readonly type: "vane-metrics:scrape"; readonly id: number } | { readonly type: "vane-metrics:own"; readonly id: number; readonly metrics: WorkerMetrics };
/** Primary → worker. */
type MetricsToWorker =
  | { readonly type: "vane-metrics:collect"; readonly id: number }
  | { readonly type: "vane-metrics:totals"; readonly id: number; readonly body?: string; readonly error?: string };

/** A worker busy past this is left out of the scrape rather than stalling it. */
const COLLECT_TIMEOUT_MS = 5_000;
/** The primary answers within COLLECT_TIMEOUT_MS; past this it is gone. */
const SCRAPE_TIMEOUT_MS = 10_000;

const isMessage = (message: unknown): message is { type: string; id: number } =>
  typeof message === "object" && message !== null && typeof (message as { type?: unknown }).type === "string" && (message as { type: string }).type.startsWith("vane-metrics:");

/**
 * In a worker: answers the primary's requests for `registry`, and returns the scrape that asks
 * the primary for everyone's totals.
 */
export function clusterScrape(registry: Registry): () => Promise<{ contentType: string; body: string }> {
  const waiting = new Map<number, (message: Extract<MetricsToWorker, { type: "vane-metrics:totals" }>) => void>();
  let next = 0;
  process.on("message", (message: unknown) => {
    if (!isMessage(message)) return;
    const m = message as MetricsToWorker;
    if (m.type === "vane-metrics:collect") {
      void registry.getMetricsAsJSON().then((metrics) => process.send?.({ type: "vane-metrics:own", id: m.id, metrics } satisfies MetricsToPrimary));
    } else waiting.get(m.id)?.(m);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => settle({ type: "vane-metrics:totals", id, error: "the primary process did not answer" }), SCRAPE_TIMEOUT_MS);
      const settle = (answer: Extract<MetricsToWorker, { type: "vane-metrics:totals" }>) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (answer.body !== undefined) resolve({ contentType: registry.contentType, body: answer.body });
        else reject(new Error(answer.error));
      };
      waiting.set(id, settle);
      process.send!({ type: "vane-metrics:scrape", id } satisfies MetricsToPrimary);
    });
}

/** In the primary: sums the registries of `workers` (those that listen) for whichever of them is scraped. */
export function sumWorkerMetrics(workers: () => Iterable<Worker>): () => void {
  const collecting = new Map<string, (metrics: WorkerMetrics | undefined) => void>();
  let next = 0;
  const collect = (worker: Worker, id: number) =>
    new Promise<WorkerMetrics | undefined>((resolve) => {
      const key = `${worker.id}:${id}`;
      const done = (metrics: WorkerMetrics | undefined) => {
        clearTimeout(timer);
        worker.off("exit", gone);
        collecting.delete(key);
        resolve(metrics);
      };
      const gone = () => done(undefined);
      const timer = setTimeout(gone, COLLECT_TIMEOUT_MS);
      worker.once("exit", gone);
      collecting.set(key, done);
      if (worker.isConnected()) worker.send({ type: "vane-metrics:collect", id } satisfies MetricsToWorker);
      else gone();
    });
  const totals = async () => {
    const id = next++;
    const own = await Promise.all([...workers()].map((worker) => collect(worker, id)));
    return AggregatorRegistry.aggregate(own.filter((metrics) => metrics !== undefined)).metrics();
  };
  const onMessage = (worker: Worker, message: unknown) => {
    if (!isMessage(message)) return;
    const m = message as MetricsToPrimary;
    if (m.type === "vane-metrics:own") collecting.get(`${worker.id}:${m.id}`)?.(m.metrics);
    else
      totals().then(
        (body) => worker.isConnected() && worker.send({ type: "vane-metrics:totals", id: m.id, body } satisfies MetricsToWorker),
        (error: unknown) => worker.isConnected() && worker.send({ type: "vane-metrics:totals", id: m.id, error: String(error) } satisfies MetricsToWorker),
      );
  };
  cluster.on("message", onMessage);
  return () => cluster.off("message", onMessage);
}
