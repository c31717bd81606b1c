// `vane results` for the console, handed to the Node host by `vane serve` (the server imports no
// verb's code): the same option parsing (metrics, guardrails,
// windows, times), the same DuckDB sums over the Parquet archive and the log's tail (an in-memory
// database per request, holding no file) and the same statistics as the verb, so the page and
// `vane results --json` agree. Node's, as DuckDB is: a Worker has no results page.
import { type ExperimentResults, experimentResults } from "../analysis/results/results.js";
import type { ResultsAggregates } from "../analysis/results/source.js";
import { UsageError } from "./args.js";
import { type LookPoint, lookSeries, lookTimes } from "./results-looks.js";
import { metricSpecs, timeOption } from "./results-options.js";
import { EventView } from "../store/columnar/event-view.js";
import { DuckResultsSource, type LookAggregates } from "../store/columnar/results-sql.js";
import type { ConsoleResultsSources } from "../server/node.js";
import { AdminRefusal } from "../server/admin/refusal.js";
import type { ConsoleResults } from "../server/console/results.js";

/** What the page shows: the results, the hourly units for the cumulative plot, and each metric's lift as of each day's end. */
export interface ResultsPage {
  readonly results: ExperimentResults;
  readonly hourly: ResultsAggregates["hourly"];
  readonly unitsInSeveral: number;
  /** Per metric (in order): treatment allocation key → its lift and sequential interval at each look (`vane results --sequential --html`'s plot). */
  readonly overDays: readonly Record<string, readonly LookPoint[]>[];
}

export function nodeConsoleResults(sources: ConsoleResultsSources): ConsoleResults {
  return async (subject, options) => {
    let parsed;
    try {
      const metrics = metricSpecs(options, "");
      const since = timeOption(options.since, "since", "");
      const until = timeOption(options.until, "until", "") ?? options.now;
      parsed = { metrics, since, until };
    } catch (error) {
      if (error instanceof UsageError) throw new AdminRefusal("BAD_REQUEST", error.message.replace(/--(metric|guardrail|window)/g, "$1"));
      throw error;
    }
    const { policy, orgId, projectId, env } = subject;
    const view = await EventView.open(sources);
    let looks: LookAggregates[];
    try {
      const allocationKeys = Object.fromEntries(policy.allocations.map((a) => [a.id, a.key]));
      const query = { orgId, projectId, env, policyId: policy.id, policyKey: policy.key, allocationKeys, ...parsed, weighted: policy.kind !== "static" };
      // The results as of each day's end too, in the same read, as `vane results --sequential --html` draws them.
      looks = await new DuckResultsSource(view).aggregateLooks(query, (first) => lookTimes(first, parsed.until).slice(0, -1));
    } finally {
      view.close();
    }
    const aggregates = looks.at(-1)!.aggregates;
    if (aggregates.unitsWithoutPropensity > 0) throw new AdminRefusal("BAD_REQUEST", `policy "${policy.key}" is adaptive, but ${aggregates.unitsWithoutPropensity} units' first exposures have no propensity (probability) to weigh them by`);
    const results = experimentResults(subject, aggregates, { metrics: parsed.metrics, window: { since: parsed.since, until: parsed.until } });
    const overDays = lookSeries(looks, { subject, metrics: parsed.metrics, ...(parsed.since !== undefined && { since: parsed.since }) }).map((series) => Object.fromEntries(series));
    return { results, hourly: aggregates.hourly, unitsInSeveral: aggregates.unitsInSeveral, overDays } satisfies ResultsPage;
  };
}
