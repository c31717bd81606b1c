// The figures the console's health page shows, read from the same exposition text GET /metrics
// serves (observability/prometheus.ts), so the page and a Prometheus scrape never disagree:
// requests, server errors and mean latency per route, rate-limit refusals, events by outcome,
// store errors and the learner's lag.

export interface RouteFigures {
  readonly method: string;
  readonly route: string;
  readonly requests: number;
  /** Answers with a 5xx status. */
  readonly serverErrors: number;
  readonly meanMs: number;
}

export interface MetricsFigures {
  readonly routes: RouteFigures[];
  readonly rateLimited: number;
  readonly events: Record<string, number>;
  readonly storeErrors: number;
  /** Events not yet read by the learner, when the learner reports it. */
  readonly learnerLagEvents?: number;
}

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = SAMPLE.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? "").matchAll(LABEL)) labels[name!] = value!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    out.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return out;
}

const sum = (list: readonly Sample[]) => list.reduce((total, s) => total + s.value, 0);

export function metricsFigures(text: string): MetricsFigures {
  const all = samples(text);
  const named = (name: string) => all.filter((s) => s.name === name);
  const routes = new Map<string, { method: string; route: string; requests: number; serverErrors: number; seconds: number }>();
  const routeOf = (s: Sample) => {
    const id = `${s.labels.method} ${s.labels.route}`;
    let figures = routes.get(id);
    if (figures === undefined) routes.set(id, (figures = { method: s.labels.method ?? "", route: s.labels.route ?? "", requests: 0, serverErrors: 0, seconds: 0 }));
    return figures;
  };
  for (const s of named("vane_http_request_duration_seconds_count")) {
    const figures = routeOf(s);
    figures.requests += s.value;
    if (Number(s.labels.status) >= 500) figures.serverErrors += s.value;
  }
  for (const s of named("vane_http_request_duration_seconds_sum")) routeOf(s).seconds += s.value;
  const events: Record<string, number> = {};
  for (const s of named("vane_events_total")) events[s.labels.outcome ?? ""] = (events[s.labels.outcome ?? ""] ?? 0) + s.value;
  const lag = named("vane_learner_lag_events");
  return {
    routes: [...routes.values()]
      .map(({ seconds, ...rest }) => ({ ...rest, meanMs: rest.requests === 0 ? 0 : (seconds / rest.requests) * 1000 }))
      .sort((a, b) => b.requests - a.requests),
    rateLimited: sum(named("vane_rate_limited_total")),
    events,
    storeErrors: sum(named("vane_store_errors_total")),
    ...(lag.length > 0 && { learnerLagEvents: sum(lag) }),
  };
}
