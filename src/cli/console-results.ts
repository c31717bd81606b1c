// `vane results` for the console, handed to the Node host by `vane serve` (the server imports no
// verb's code): the same option parsing (metrics, guardrails,
// windows, times), the same DuckDB sums over the Parquet archive and the log's tail (an in-memory
// database per request, holding no file) and the same statistics as the verb, so the page and
// `vane results --json` agree. Node's, as DuckDB is: a Worker has no results page.
import { type ExperimentResults, experimentResults } from "../analysis/results/results.js";
import type { ResultsAggregates } from "../analysis/results/source.js";
import { UsageError } from "./args.js";
import { metricSpecs, timeOption } from "./results-options.js";
import { EventView } from "../store/columnar/event-view.js";
import { DuckResultsSource } from "../store/columnar/results-sql.js";
import type { ConsoleResultsSources } from "../server/node.js";
import { AdminRefusal } from "../server/admin/refusal.js";
import type { ConsoleResults } from "../server/console/results.js";

/** What the page shows: the results, and the hourly units for the cumulative plot. */
export interface ResultsPage {
  readonly results: ExperimentResults;
  readonly hourly: ResultsAggregates["hourly"];
  readonly unitsInSeveral: number;
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
    let aggregates: ResultsAggregates;
    try {
      const allocationKeys = Object.fromEntries(policy.allocations.map((a) => [a.id, a.key]));
      aggregates = await new DuckResultsSource(view).aggregate({ orgId, projectId, env, policyId: policy.id, policyKey: policy.key, allocationKeys, ...parsed, weighted: policy.kind !== "static" });
    } finally {
      view.close();
    }
    if (aggregates.unitsWithoutPropensity > 0) throw new AdminRefusal("BAD_REQUEST", `policy "${policy.key}" is adaptive, but ${aggregates.unitsWithoutPropensity} units' first exposures have no propensity (probability) to weigh them by`);
    const results = experimentResults(subject, aggregates, { metrics: parsed.metrics, window: { since: parsed.since, until: parsed.until } });
    return { results, hourly: aggregates.hourly, unitsInSeveral: aggregates.unitsInSeveral } satisfies ResultsPage;
  };
}
