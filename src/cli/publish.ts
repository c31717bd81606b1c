// Publishing one bundle from the CLI (`bundles put`, `bundles rollback`, `flags set`, `rollout`,
// `init`): every check `vane import` makes, plus the version order — a bundle older than the
// stored one is refused unless the caller says it is a rollback, so a stale file never silently
// replaces a newer bundle.
import type { Bundle } from "../bundle/types.js";
import type { BundleProblem } from "../bundle/validate.js";
import { isoTimestampMs } from "../bundle/validate-values.js";
import { loadEngine } from "../engine/loader.js";
import { DEFAULT_LIMITS } from "../server/app.js";
import type { BundleStore, StoredBundle, Stores } from "../store/types.js";
import { CliError, dataHelp, STORE_OPTIONS, UsageError } from "./args.js";
import { checkBundle, versionProblems } from "./bundle-checks.js";
import { type Io, problemList } from "./output.js";
import { type StoreWhere, describeStore } from "./store-access.js";

export interface Publication {
  /** "refused …, nothing was written" heads the problem list. */
  readonly heading: string;
  /** Publishing a version older than the stored one is allowed (`--rollback`). */
  readonly rollback?: boolean;
  /** Where it is stored, for the message. */
  readonly where: StoreWhere;
}

/** Everything that refuses `raw` before the store is touched: validation, schemas, the engine. */
export async function fileProblems(raw: unknown): Promise<{ problems: BundleProblem[]; bundle?: Bundle }> {
  return checkBundle(raw, "", await loadEngine());
}

/** What the stored bundle of its project/env refuses: same version with other content, an older version. */
export async function storedProblems(bundle: Bundle, bundles: BundleStore, how: { rollback?: boolean }): Promise<BundleProblem[]> {
  const problems = await versionProblems(bundle, "", bundles);
  if (problems.length > 0 || how.rollback === true) return problems;
  const stored = await bundles.version(bundle.projectId, bundle.env);
  if (stored === undefined || stored === bundle.version) return problems;
  const [mine, theirs] = [isoTimestampMs(bundle.version), isoTimestampMs(stored)];
  if (mine !== undefined && theirs !== undefined && mine <= theirs) {
    problems.push({
      path: "version",
      message: `${bundle.version} is not newer than the stored version ${stored} of ${bundle.projectId}/${bundle.env}; give the bundle a later version, or pass --rollback to publish an older one on purpose`,
    });
  }
  return problems;
}

/** Checks and stores `raw`; prints what was stored or every problem. The exit code. */
export async function publish(raw: unknown, stores: Stores, how: Publication & { io: Io }): Promise<number> {
  const { io, heading } = how;
  const { problems, bundle } = await fileProblems(raw);
  if (bundle === undefined) return refuse(io, heading, problems);
  const stale = await storedProblems(bundle, stores.bundles, how);
  if (stale.length > 0) return refuse(io, heading, stale);
  const previous = await stores.bundles.version(bundle.projectId, bundle.env);
  await stores.bundles.put(bundle, new Date().toISOString());
  const was = previous === undefined ? "" : previous === bundle.version ? " (unchanged)" : `, replacing version ${previous}`;
  io.out(`Stored ${bundle.projectId}/${bundle.env} (org ${bundle.orgId}) version ${bundle.version}${was} in ${describeStore(how.where)}`);
  io.out(`A running server serves it within about ${Math.ceil(DEFAULT_LIMITS.bundleRefreshMs / 1000)} s.`);
  return 0;
}

export function refuse(io: Io, heading: string, problems: readonly BundleProblem[]): number {
  io.err(problemList(heading, problems));
  return 1;
}

/** A version for a bundle made from the stored one: now, or just after the stored version when the clock is behind it. */
export function nextVersion(storedVersion: string, now: number): string {
  const stored = isoTimestampMs(storedVersion) ?? -Infinity;
  return new Date(Math.max(now, stored + 1)).toISOString();
}

/** The stored bundle of a project/env, or a refusal naming it. */
export async function storedBundle(bundles: BundleStore, where: { project: string; env: string }): Promise<StoredBundle> {
  const stored = await bundles.get(where.project, where.env);
  if (stored === undefined) throw new CliError(`no bundle for ${where.project}/${where.env}`);
  return stored;
}

/** The project named by --project, or the only project in the store; several and no --project is a usage error. */
export async function projectOf(bundles: BundleStore, given: string | undefined, usage: string): Promise<string> {
  if (given !== undefined) return given;
  const projects = [...new Set((await bundles.list()).map((b) => b.projectId))];
  if (projects.length === 1) return projects[0]!;
  if (projects.length === 0) throw new CliError("no bundles stored yet");
  throw new UsageError(`the store holds ${projects.length} projects (${projects.join(", ")}); pass --project`, usage);
}

/** Which stored bundle a change verb works on: the options and help that bundles history, flags and rollout share. */
export const WHERE_OPTIONS = {
  ...STORE_OPTIONS,
  project: { type: "string" },
  env: { type: "string", default: "production" },
} as const;
export const WHERE_HELP = `  --project P  the project (default: the only one stored)
  --env E      the environment (default production)
${dataHelp(15)}`;
