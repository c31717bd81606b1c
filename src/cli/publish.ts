// Publishing one bundle from the CLI (`bundles put`, `bundles rollback`, `flags set`, `rollout`,
// `init`) through the admin operations (server/admin/bundle-operations.ts): every check `vane
// import` makes, plus the version order — a bundle older than the stored one is refused unless the
// caller says it is a rollback, so a stale file never silently replaces a newer bundle.
import type { Bundle } from "../bundle/types.js";
import type { BundleProblem } from "../bundle/validate.js";
import { loadEngine } from "../engine/loader.js";
import { DEFAULT_LIMITS } from "../server/app.js";
import { checkBundle } from "../server/admin/bundle-checks.js";
import type { Published } from "../server/admin/operations.js";
import { AdminRefusal } from "../server/admin/refusal.js";
import type { BundleStore } from "../store/types.js";
import { CliError, dataHelp, UsageError } from "./args.js";
import { type Io, problemList } from "./output.js";
import { REMOTE_STORE_OPTIONS, type StoreWhere, type VerbStores, describeStore, remoteHelp } from "./store-access.js";

export { storedProblems } from "../server/admin/bundle-checks.js";
export { nextVersion, storedBundle } from "../server/admin/bundle-operations.js";

export interface Publication {
  /** "refused …, nothing was written" heads the problem list. */
  readonly heading: string;
  /** Publishing a version older than the stored one is allowed (`--rollback`). */
  readonly rollback?: boolean;
  /** The stored version an edit was made from: refused when another was stored meanwhile. */
  readonly base?: string;
  /** Where it is stored, for the message. */
  readonly where: StoreWhere;
}

/** Everything that refuses `raw` before the store is touched: validation, schemas, the engine. */
export async function fileProblems(raw: unknown): Promise<{ problems: BundleProblem[]; bundle?: Bundle }> {
  return checkBundle(raw, "", await loadEngine());
}

/** Checks and stores `raw` (here or, with --remote, on the server); prints what was stored or every problem. The exit code. */
export function publish(raw: unknown, stores: VerbStores, how: Publication & { io: Io }): Promise<number> {
  return printPublication(how, () => stores.admin.publishBundle(raw, { rollback: how.rollback, base: how.base }));
}

/** Runs a publication (a put, a rollback) and prints what was stored, after `lead` when given, or every problem. The exit code. */
export async function printPublication(how: Publication & { io: Io; lead?: string }, publication: () => Promise<Published>): Promise<number> {
  const { io, heading } = how;
  let result: Published;
  try {
    result = await publication();
  } catch (error) {
    if (error instanceof AdminRefusal && error.problems.length > 0) return refuse(io, heading, error.problems);
    throw error;
  }
  const { stored, previous } = result;
  if (how.lead !== undefined) io.out(how.lead);
  const was = previous === undefined ? "" : previous === stored.version ? " (unchanged)" : `, replacing version ${previous}`;
  io.out(`Stored ${stored.projectId}/${stored.env} (org ${stored.orgId}) version ${stored.version}${was} in ${describeStore(how.where)}`);
  io.out(`A running server serves it within about ${Math.ceil(DEFAULT_LIMITS.bundleRefreshMs / 1000)} s.`);
  return 0;
}

export function refuse(io: Io, heading: string, problems: readonly BundleProblem[]): number {
  io.err(problemList(heading, problems));
  return 1;
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
  ...REMOTE_STORE_OPTIONS,
  project: { type: "string" },
  env: { type: "string", default: "production" },
} as const;
export const WHERE_HELP = `  --project P  the project (default: the only one stored)
  --env E      the environment (default production)
${dataHelp(15)}
${remoteHelp(15)}`;
