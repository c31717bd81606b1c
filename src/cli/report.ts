// `vane report POLICY`: off-policy evaluation of an adaptive policy from the stored decisions and
// rewards (docs/report.md). Streams the policy's project's decisions and track events once, in
// commit order, through DuckDB over the Parquet archive and the log's tail, keeping one record per decision.
import type { Estimate } from "../analysis/off-policy.js";
import { readPolicyOutcomes } from "../analysis/outcomes.js";
import { type PolicyReport, type ReportSubject, policyReport, refusal } from "../analysis/policy-report.js";
import type { Bundle, Policy } from "../bundle/types.js";
import type { BundleStore } from "../store/types.js";
import { CliError, dataHelp, parseVerbArgs, STORE_OPTIONS } from "./args.js";
import { READ_OPTIONS, readHelp, withEventView } from "./event-reads.js";
import { shortTime, table } from "./output.js";
import type { Verb } from "./verb.js";

const DEFAULT_ENV = "production";
const DIGITS = 4;

const USAGE = `Usage: vane report POLICY [--project P] [--env ${DEFAULT_ENV}] [--json] [--data DIR]

Off-policy evaluation of an adaptive policy from its stored decisions and rewards. Per arm: the
closed decisions, those still pending, rewards, mean reward, and what the arm would earn if it
were always played, estimated by inverse propensity scoring (IPS) and self-normalized IPS, with
95% confidence intervals. POLICY is the policy's id or key. Rules: docs/report.md.
  --project P      the project whose bundle has POLICY (default: the only one that has it)
  --env E          the environment (default ${DEFAULT_ENV})
  --json           one JSON object instead of the table
${dataHelp(19)}
${readHelp(19)}`;

export const reportVerb: Verb = {
  name: "report",
  summary: "off-policy evaluation of an adaptive policy's arms (IPS, SNIPS)",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, {
      usage: USAGE,
      options: {
        ...STORE_OPTIONS,
        ...READ_OPTIONS,
        project: { type: "string" },
        env: { type: "string", default: DEFAULT_ENV },
        json: { type: "boolean", default: false },
      },
      positionals: [1, 1],
    });
    const nowMs = Date.now();
    const report = await withEventView(values, USAGE, async (view, stores) => {
      const subject = await findPolicy(stores.bundles, positionals[0]!, { project: values.project, env: values.env });
      const outcomes = await readPolicyOutcomes(view, subject);
      const refused = refusal(subject, outcomes.counts(nowMs));
      if (refused !== undefined) throw new CliError(refused);
      return policyReport(subject, outcomes, nowMs);
    });
    io.out(values.json ? JSON.stringify(report, null, 2) : reportText(report));
    return 0;
  },
};

async function findPolicy(bundles: BundleStore, ref: string, where: { project: string | undefined; env: string }): Promise<ReportSubject> {
  const { project, env } = where;
  if (project !== undefined) {
    const stored = await bundles.get(project, env);
    if (stored === undefined) throw new CliError(`no bundle for ${project}/${env}`);
    const policy = policyIn(stored.bundle, ref);
    if (policy === undefined) throw new CliError(`no policy "${ref}" in the bundle of ${project}/${env}`);
    return { policy, orgId: stored.bundle.orgId, projectId: project, env };
  }
  const found: ReportSubject[] = [];
  for (const summary of await bundles.list()) {
    if (summary.env !== env) continue;
    const stored = await bundles.get(summary.projectId, env);
    const policy = stored === undefined ? undefined : policyIn(stored.bundle, ref);
    if (policy !== undefined) found.push({ policy, orgId: summary.orgId, projectId: summary.projectId, env });
  }
  if (found.length === 0) throw new CliError(`no ${env} bundle has a policy "${ref}"`);
  if (found.length > 1) throw new CliError(`the ${env} bundles of ${found.map((f) => f.projectId).join(", ")} all have a policy "${ref}"; pass --project`);
  return found[0]!;
}

/** The policy with this id, else the one with this key (ids and keys are unique per bundle). */
function policyIn(bundle: Bundle, ref: string): Policy | undefined {
  const policies = bundle.layers.flatMap((layer) => layer.policies);
  return policies.find((p) => p.id === ref) ?? policies.find((p) => p.key === ref);
}

function reportText(report: PolicyReport): string {
  const { policy, reward } = report;
  const value = reward.type === "value";
  const headers = ["ARM", "DECISIONS", "PENDING", "REWARDS", ...(value ? ["SUM"] : []), "MEAN", "IPS", "IPS 95% CI", "SNIPS", "SNIPS 95% CI", "ESS"];
  const rows = report.arms.map((arm) => [
    arm.inBundle ? arm.key : `${arm.key} (not in bundle)`,
    String(arm.decisions),
    String(arm.pending),
    String(arm.rewards),
    ...(value ? [number(arm.rewardSum)] : []),
    number(arm.mean),
    number(arm.ips?.estimate),
    interval(arm.ips),
    number(arm.snips?.estimate),
    interval(arm.snips),
    arm.effectiveSampleSize.toFixed(1),
  ]);
  const name = policy.key === policy.id ? policy.id : `${policy.key} (${policy.id})`;
  return [
    `Policy ${name}, ${policy.kind}, in ${report.projectId}/${report.env}, as of ${shortTime(report.asOf)}`,
    `Reward: ${reward.event} (${reward.type}) within ${reward.windowSeconds} s; ${report.decisions} decisions closed, ${report.pending} pending`,
    "",
    table(headers, rows),
    "",
    "IPS, SNIPS: the arm's mean reward had the policy always played it. 95% CIs: normal approximation (SNIPS: delta method).",
  ].join("\n");
}

function number(x: number | null | undefined): string {
  return x === null || x === undefined ? "-" : x.toFixed(DIGITS);
}

function interval(e: Estimate | null): string {
  return e?.ci95 ? `[${number(e.ci95[0])}, ${number(e.ci95[1])}]` : "-";
}
