// `vane results POLICY`: an experiment's units, sample-ratio test, metrics with lift over control
// and guardrails, from the stored events (docs/results.md). The sums come from DuckDB over the
// Parquet archive and the log's tail (src/store/columnar/); the statistics are src/analysis/results/.
import { writeFileSync } from "node:fs";
import { CORRECTIONS } from "../analysis/results/corrections.js";
import { queryPlan } from "../analysis/results/plan.js";
import { type MetricSpec, experimentResults } from "../analysis/results/results.js";
import type { ResultsAggregates, ResultsQuery } from "../analysis/results/source.js";
import type { Bundle, Policy } from "../bundle/types.js";
import { DuckResultsSource } from "../store/columnar/results-sql.js";
import type { BundleStore } from "../store/types.js";
import { CliError, dataHelp, parseVerbArgs, STORE_OPTIONS } from "./args.js";
import { READ_OPTIONS, readHelp, withEventView } from "./event-reads.js";
import { withProgress } from "./progress.js";
import { resultsHtml } from "./results-html.js";
import { lookSeries, lookTimes } from "./results-looks.js";
import { capOption, choiceOption, metricSpecs, preperiodOption, timeOption } from "./results-options.js";
import { overlapNote, resultsText } from "./results-text.js";
import type { Verb } from "./verb.js";

const DEFAULT_ENV = "production";

const USAGE = `Usage: vane results POLICY [--project P] [--env ${DEFAULT_ENV}] --metric EVENT[:value]...
                    [--guardrail EVENT[:value]:increase|decrease]... [--window [EVENT=]DURATION]...
                    [--since ISO] [--until ISO] [--cuped | --pre-period DURATION] [--sequential]
                    [--engine frequentist|bayesian] [--correction holm|bh|none] [--cap Q]
                    [--json] [--html FILE] [--data DIR]

An experiment's results from the stored events: units per allocation and a sample-ratio test
against the intended split; per metric, each allocation's conversion rate or mean value per unit,
and its lift over control (the allocation named "control", else the first) with 95% intervals and
a p-value; guardrails ok, violated or insufficient_data (< 30 units). POLICY is the policy's id or
key. Rules and tests: docs/results.md.
  --project P        the project whose bundle has POLICY (default: the only one that has it)
  --env E            the environment (default ${DEFAULT_ENV})
  --metric M         EVENT (conversion rate), EVENT:value (mean value per unit), or a ratio
                     A/B of two of those (delta method); repeatable
  --guardrail G      EVENT[:value]:increase|decrease, the move that is bad; repeatable
  --window W         count events only this long after exposure: 7d, 12h, or EVENT=7d for one event
  --since, --until   exposures from / up to these times (when they happened)
  --cuped            CUPED beside the plain estimate, the covariate each unit's same metric in the
                     pre-period before its first exposure (the metrics' window, else 14d)
  --pre-period D     CUPED with this pre-period (e.g. 14d)
  --sequential       always-valid 95% confidence sequences, safe to look at any time
  --engine E         frequentist (default) or bayesian: also chance to beat control, expected loss
  --correction C     holm, bh (Benjamini-Hochberg) or none (default): adjusted p-values across
                     every treatment x metric
  --cap Q            winsorize value metrics: cap each unit's value at this quantile (e.g. 0.99)
  --json             one JSON object instead of the tables
  --html FILE        also write a self-contained page with the tables and plots
${dataHelp(21)}
${readHelp(21)}`;

export const resultsVerb: Verb = {
  name: "results",
  summary: "an experiment's lift per metric with intervals, sample-ratio test, guardrails",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, {
      usage: USAGE,
      options: {
        ...STORE_OPTIONS,
        ...READ_OPTIONS,
        project: { type: "string" },
        env: { type: "string", default: DEFAULT_ENV },
        metric: { type: "string", multiple: true, default: [] },
        guardrail: { type: "string", multiple: true, default: [] },
        window: { type: "string", multiple: true, default: [] },
        since: { type: "string" },
        until: { type: "string" },
        json: { type: "boolean", default: false },
        html: { type: "string" },
        cuped: { type: "boolean", default: false },
        "pre-period": { type: "string" },
        sequential: { type: "boolean", default: false },
        engine: { type: "string", default: "frequentist" },
        correction: { type: "string", default: "none" },
        cap: { type: "string" },
      },
      positionals: [1, 1],
    });
    const cap = capOption(values.cap, USAGE);
    const metrics = metricSpecs(values, USAGE).map((m) => (cap !== undefined && m.kind === "value" ? { ...m, cap } : m));
    const views = {
      preperiodMs: preperiodOption(values, { metrics, usage: USAGE }),
      sequential: values.sequential,
      engine: choiceOption(values.engine, "--engine", { choices: ["frequentist", "bayesian"] as const, usage: USAGE }),
      correction: choiceOption(values.correction, "--correction", { choices: CORRECTIONS, usage: USAGE }),
    };
    const since = timeOption(values.since, "--since", USAGE);
    const until = timeOption(values.until, "--until", USAGE) ?? new Date().toISOString();
    const { subject, aggregates, looks } = await withEventView(values, USAGE, async (view, stores) => {
      const subject = await findPolicy(stores.bundles, positionals[0]!, { project: values.project, env: values.env });
      const query = resultsQuery(subject, { since, until, metrics, preperiodMs: views.preperiodMs });
      // The page's plot over days: the results as of each day's end too, in the same read (docs/results.md "Sequential testing").
      const overDays = values.html !== undefined && views.sequential;
      const looks = await withProgress(view.connection, () => new DuckResultsSource(view).aggregateLooks(query, (first) => (overDays ? lookTimes(first, until).slice(0, -1) : [])));
      return { subject, aggregates: looks.at(-1)!.aggregates, looks };
    });
    refuseUnweighable(subject, aggregates);
    const results = experimentResults(subject, aggregates, { metrics, window: { since, until }, views });
    const context = { projectId: subject.projectId, env: subject.env, kind: subject.policy.kind, unitsInSeveral: aggregates.unitsInSeveral };
    if (values.html !== undefined) {
      const series = views.sequential ? lookSeries(looks, { subject, metrics, since }) : undefined;
      writeFileSync(values.html, resultsHtml(results, { ...context, hourly: aggregates.hourly, ...(series !== undefined && { looks: series }) }));
      io.err(`wrote ${values.html}`);
    }
    if (values.json) {
      if (aggregates.unitsInSeveral > 0) io.err(overlapNote(aggregates.unitsInSeveral));
      io.out(JSON.stringify(results, null, 2));
    } else io.out(resultsText(results, context));
    return 0;
  },
};

/** What to ask the store: the metrics' plan (ratios' parts and products), the pre-period for a static policy. */
function resultsQuery(subject: Subject, how: { since?: string; until: string; metrics: readonly MetricSpec[]; preperiodMs?: number }): ResultsQuery {
  const { policy, orgId, projectId, env } = subject;
  const allocationKeys = Object.fromEntries(policy.allocations.map((a) => [a.id, a.key]));
  const weighted = policy.kind !== "static";
  if (weighted && how.metrics.some((m) => m.ratio !== undefined)) throw new CliError(`policy "${policy.key}" is adaptive: ratio metrics are not weighted yet (docs/results.md)`);
  const plan = queryPlan(how.metrics);
  return {
    ...{ orgId, projectId, env, policyId: policy.id, policyKey: policy.key, allocationKeys, since: how.since, until: how.until, metrics: plan.metrics, weighted },
    ...(how.preperiodMs !== undefined && !weighted && { preperiodMs: how.preperiodMs }),
    ...(plan.products.length > 0 && { products: plan.products }),
  };
}

interface Subject {
  readonly policy: Policy;
  readonly layerId: string;
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
}

// Weighted means need every unit's propensity: without one, the figures would be silently biased.
function refuseUnweighable(subject: Subject, aggregates: ResultsAggregates): void {
  const missing = aggregates.unitsWithoutPropensity;
  if (missing === 0) return;
  const total = aggregates.allocations.reduce((sum, a) => sum + a.units, 0);
  throw new CliError(`policy "${subject.policy.key}" is adaptive, but ${missing} of ${total} units' first exposures have no propensity (probability) to weigh them by`);
}

async function findPolicy(bundles: BundleStore, ref: string, where: { project: string | undefined; env: string }): Promise<Subject> {
  const { project, env } = where;
  const projects = project !== undefined ? [project] : (await bundles.list()).filter((b) => b.env === env).map((b) => b.projectId);
  const found: Subject[] = [];
  for (const projectId of projects) {
    const stored = await bundles.get(projectId, env);
    if (stored === undefined) throw new CliError(`no bundle for ${projectId}/${env}`);
    const inLayer = policyIn(stored.bundle, ref);
    if (inLayer !== undefined) found.push({ ...inLayer, orgId: stored.bundle.orgId, projectId, env });
  }
  if (found.length === 0) throw new CliError(project === undefined ? `no ${env} bundle has a policy "${ref}"` : `no policy "${ref}" in the bundle of ${project}/${env}`);
  if (found.length > 1) throw new CliError(`the ${env} bundles of ${found.map((f) => f.projectId).join(", ")} all have a policy "${ref}"; pass --project`);
  return found[0]!;
}

/** The policy with this id, else the one with this key, and its layer. */
function policyIn(bundle: Bundle, ref: string): { policy: Policy; layerId: string } | undefined {
  const all = bundle.layers.flatMap((layer) => layer.policies.map((policy) => ({ policy, layerId: layer.id })));
  return all.find((p) => p.policy.id === ref) ?? all.find((p) => p.policy.key === ref);
}
