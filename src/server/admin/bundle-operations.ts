// Publishing bundles (`vane bundles put|rollback`, `flags set`, `rollout`, `init`, the admin API,
// the console): every check of bundle-checks.ts, then the put; a rollback publishes an earlier
// version's content again as a new version, through the same checks; an edit (bundle/edits.ts)
// makes the stored bundle's next version.
import { type BundleEdit, BundleEditError, type EditedBundle, applyEdit } from "../../bundle/edits.js";
import type { Bundle } from "../../bundle/types.js";
import { isoTimestampMs } from "../../bundle/validate-values.js";
import { ProjectOwnedElsewhere } from "../../store/tenancy.js";
import type { BundleStore, BundleSummary, StoredBundle, Stores } from "../../store/types.js";
import { checkBundle, storedProblems } from "./bundle-checks.js";
import type { OperationDependencies, Published, PublishHow } from "./operations.js";
import { AdminRefusal, refusedInput } from "./refusal.js";

export interface BundleWhere {
  readonly project: string;
  readonly env: string;
}

/** Puts that find another version stored since their checks, before a publication gives up. */
export const PUT_ATTEMPTS = 3;

export async function publishBundle(stores: Stores, raw: unknown, how: PublishHow, deps: OperationDependencies): Promise<Published> {
  const { problems, bundle } = checkBundle(raw, "", await deps.engine(), deps.schemaCompiler);
  if (bundle === undefined) throw refusedInput(problems);
  for (let attempt = 1; attempt <= PUT_ATTEMPTS; attempt++) {
    // Read before the checks and put only over it: a publication racing ours (another server,
    // the CLI) makes the put store nothing, and the checks run again against what it stored.
    const previous = await stores.bundles.version(bundle.projectId, bundle.env);
    if (how.base !== undefined && previous !== how.base) throw changedSince(bundle, { base: how.base, now: previous });
    const stale = await storedProblems(bundle, stores.bundles, how);
    if (stale.length > 0) throw refusedInput(stale);
    const storedAt = new Date(deps.now()).toISOString();
    try {
      if (await stores.bundles.put(bundle, storedAt, previous)) return { stored: summaryOf(bundle, storedAt), ...(previous !== undefined && { previous }) };
    } catch (error) {
      if (error instanceof ProjectOwnedElsewhere) throw new AdminRefusal("BAD_REQUEST", error.message);
      throw error;
    }
  }
  throw new AdminRefusal("BAD_REQUEST", `${bundle.projectId}/${bundle.env} was published by someone else ${PUT_ATTEMPTS} times while this bundle was checked; nothing was written, try again`);
}

/** An edit made from `base` while another version was stored meanwhile: published, it would undo that one. */
function changedSince(bundle: Bundle, versions: { base: string; now: string | undefined }): AdminRefusal {
  return refusedInput([
    {
      path: "version",
      message: `${bundle.projectId}/${bundle.env} changed while this change was made from version ${versions.base} (version ${versions.now ?? "none"} is stored now), so it would undo that one; make the change again`,
    },
  ]);
}

export async function rollbackBundle(stores: Stores, target: { where: BundleWhere; version: string }, deps: OperationDependencies): Promise<Published> {
  const earlier = await versionOf(stores.bundles, target.version, target.where);
  const current = await storedBundle(stores.bundles, target.where);
  return publishBundle(stores, { ...earlier, version: nextVersion(current.bundle.version, deps.now()) }, { base: current.bundle.version }, deps);
}

/**
 * `vane flags set` or `vane rollout` on the stored bundle: the edited copy as its next version,
 * not yet published (the console shows its diff first), and the stored version it was made from.
 */
export async function editBundle(bundles: BundleStore, target: { where: BundleWhere; edit: BundleEdit }, now: number): Promise<EditedBundle & { stored: Bundle }> {
  const stored = await storedBundle(bundles, target.where);
  let edited: EditedBundle;
  try {
    edited = applyEdit(stored.bundle, target.edit);
  } catch (error) {
    if (error instanceof BundleEditError) throw new AdminRefusal("BAD_REQUEST", error.message);
    throw error;
  }
  edited.bundle.version = nextVersion(stored.bundle.version, now);
  return { ...edited, stored: stored.bundle };
}

/** A version for a bundle made from the stored one: now, or just after the stored version when the clock is behind it. */
export function nextVersion(storedVersion: string, now: number): string {
  const stored = isoTimestampMs(storedVersion) ?? -Infinity;
  return new Date(Math.max(now, stored + 1)).toISOString();
}

/** The stored bundle of a project/env, or a refusal naming it. */
export async function storedBundle(bundles: BundleStore, where: BundleWhere): Promise<StoredBundle> {
  const stored = await bundles.get(where.project, where.env);
  if (stored === undefined) throw new AdminRefusal("NOT_FOUND", `no bundle for ${where.project}/${where.env}`);
  return stored;
}

/** One version's content: from the history, or "current" (or the stored version) from the stored bundle. */
export async function versionOf(bundles: BundleStore, version: string, where: BundleWhere): Promise<Record<string, unknown>> {
  if (version === "current") return { ...(await storedBundle(bundles, where)).bundle };
  const found = await bundles.historyVersion(where.project, where.env, version);
  if (found !== undefined) return { ...found.bundle };
  const current = await bundles.get(where.project, where.env);
  if (current?.bundle.version === version) return { ...current.bundle };
  throw new AdminRefusal("NOT_FOUND", `no version ${version} of ${where.project}/${where.env} (see \`vane bundles history\`)`);
}

/** What the store lists of a bundle stored at `storedAt`. */
export function summaryOf(bundle: Bundle, storedAt: string): BundleSummary {
  return { orgId: bundle.orgId, projectId: bundle.projectId, env: bundle.env, version: bundle.version, storedAt };
}
