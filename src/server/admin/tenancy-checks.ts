// A project belongs to the organization of its bundles (src/store/tenancy.ts). Before anything is
// written, the CLI and the admin API refuse a bundle or a project-pinned key that would give a project a second
// organization, naming where in the file and who owns the project.
import type { BundleProblem } from "../../bundle/validate.js";
import type { BundleStore } from "../../store/types.js";
import type { PlannedBundle } from "./import-checks.js";

type TenantOf = { readonly orgId: string; readonly projectId?: string };

/** The org that owns each project named by the store's bundles or the file's, first come first. */
async function ownersOf(projects: Iterable<string>, bundles: readonly PlannedBundle[], store: BundleStore): Promise<Map<string, { org: string; where: string }>> {
  const owners = new Map<string, { org: string; where: string }>();
  for (const project of new Set(projects)) {
    const [stored] = await store.orgsOf(project);
    if (stored !== undefined) owners.set(project, { org: stored, where: "the store" });
  }
  for (const { bundle, path } of bundles) {
    if (!owners.has(bundle.projectId)) owners.set(bundle.projectId, { org: bundle.orgId, where: path });
  }
  return owners;
}

export async function tenancyProblems(plan: { keys: readonly TenantOf[]; bundles: readonly PlannedBundle[] }, store: BundleStore): Promise<BundleProblem[]> {
  const projects = [...plan.bundles.map((b) => b.bundle.projectId), ...plan.keys.flatMap((k) => (k.projectId === undefined ? [] : [k.projectId]))];
  const owners = await ownersOf(projects, plan.bundles, store);
  const problems: BundleProblem[] = [];
  const check = (path: string, project: string, org: string) => {
    const owner = owners.get(project);
    if (owner !== undefined && owner.org !== org) {
      problems.push({ path, message: `project ${project} belongs to organization ${owner.org} (${owner.where}), not ${org}` });
    }
  };
  for (const { bundle, path } of plan.bundles) check(`${path}.orgId`, bundle.projectId, bundle.orgId);
  plan.keys.forEach((key, i) => {
    if (key.projectId !== undefined) check(`keys[${i}].projectId`, key.projectId, key.orgId);
  });
  return problems;
}
