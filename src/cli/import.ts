// `vane import FILE`: keys and bundles from one JSON file (decisions.md §8), all or nothing.
import type { Bundle } from "../bundle/types.js";
import type { BundleProblem } from "../bundle/validate.js";
import { loadEngine } from "../engine/loader.js";
import { DEFAULT_LIMITS } from "../server/app.js";
import { type KeyInput, toKeyRecord } from "../server/auth/api-key.js";
import type { SqliteStores } from "../store/sqlite/index.js";
import type { KeyRecord, Stores } from "../store/types.js";
import { dataHelp, parseVerbArgs, STORE_OPTIONS } from "./args.js";
import { type ImportPlan, type PlannedBundle, checkImport, fileLabel, readJsonFile, storeProblems } from "./import-file.js";
import { type Io, plural, problemList } from "./output.js";
import { nodeSha256, storeExists, withStores, describeStore } from "./store-access.js";
import { noteNewStore } from "./command-hints.js";
import { tenancyProblems } from "./tenancy-checks.js";
import type { Verb } from "./verb.js";

const USAGE = `Usage: vane import FILE|- [--data DIR]

Loads keys and bundles from FILE (- reads stdin): { "keys": [Key...], "bundles": [Bundle...] } (either may be absent).
  Key  { key, orgId, projectId?, scopes, expiresAt?, revoked?, rateLimit? }
       key: the full secret, vane_<pk|sk|mk|ak>_<32+ base62/base64url characters>
       scopes: sdk:read, sdk:write, mgmt:read, mgmt:write, admin
       rateLimit: { requestsPerSecond, burst }
Everything is checked first: one problem refuses the whole file and nothing is written.
A bundle for a project/env that has one replaces it; a key already stored is replaced.
${dataHelp(15)}`;

export const importVerb: Verb = {
  name: "import",
  summary: "load keys and bundles from a JSON file",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, {
      usage: USAGE,
      options: { ...STORE_OPTIONS },
      positionals: [1, 1],
    });
    const file = positionals[0]!;
    const read = readJsonFile(file);
    if (!read.ok) return refuse(io, file, [read.problem]);
    const { plan, problems } = checkImport(read.value, await loadEngine());
    // A new store has nothing to compare with: refuse without creating the folder.
    if (problems.length > 0 && !storeExists(values)) return refuse(io, file, problems);
    noteNewStore(values, io);
    return withStores(values, "create", async (stores) => {
      problems.push(...(await storeProblems(plan.bundles, stores.bundles)), ...(await tenancyProblems(plan, stores.bundles)));
      if (problems.length > 0) return refuse(io, file, problems);
      const lines = await write(stores, plan);
      io.out([`Imported ${plural(plan.keys.length, "key")} and ${plural(plan.bundles.length, "bundle")} into ${describeStore(values)}`, ...lines].join("\n"));
      if (lines.length > 0) io.out(`A running server sees them within about ${Math.ceil(Math.max(DEFAULT_LIMITS.bundleRefreshMs, DEFAULT_LIMITS.keyCacheMs) / 1000)} s.`);
      return 0;
    });
  },
};

function refuse(io: Io, file: string, problems: readonly BundleProblem[]): number {
  io.err(problemList(`vane import: refused ${fileLabel(file)}, nothing was written`, problems));
  return 1;
}

/** Writes the checked plan in one transaction; one summary line per key and bundle, never a secret. */
async function write(stores: SqliteStores, plan: ImportPlan): Promise<string[]> {
  const now = new Date().toISOString();
  const keys = await Promise.all(plan.keys.map((input) => keyToWrite(stores, input, now)));
  const bundles = await Promise.all(plan.bundles.map(async ({ bundle }: PlannedBundle) => ({ bundle, previous: await stores.bundles.version(bundle.projectId, bundle.env) })));
  // All or nothing: a failure part way (a full disk) leaves the store as it was.
  await stores.writeAll({ keys: keys.map((k) => k.record), bundles: bundles.map((b) => b.bundle), storedAt: now });
  return [...keys.map(keyLine), ...bundles.map(bundleLine)];
}

async function keyToWrite(stores: Stores, input: KeyInput, now: string): Promise<{ record: KeyRecord; replaced: boolean }> {
  const fresh = toKeyRecord(input, nodeSha256, now);
  const existing = await stores.keys.byId(fresh.id);
  if (existing === undefined) return { record: fresh, replaced: false };
  // The file decides the key's fields; its history (first stored, first revoked) stays.
  const revoked = fresh.revokedAt !== undefined && { revokedAt: existing.revokedAt ?? fresh.revokedAt };
  return { record: { ...fresh, createdAt: existing.createdAt, ...revoked }, replaced: true };
}

function keyLine({ record, replaced }: { record: KeyRecord; replaced: boolean }): string {
  const tenant = `${record.orgId}/${record.projectId ?? "(org)"}`;
  const state = record.revokedAt !== undefined ? ", revoked" : "";
  return `  key     ${record.id}  ${record.kind}  ${tenant}  ${record.scopes.join(",")}${state}  ${replaced ? "replaced" : "new"}`;
}

function bundleLine({ bundle, previous }: { bundle: Bundle; previous: string | undefined }): string {
  const was = previous === undefined ? "new" : previous === bundle.version ? "unchanged" : `replaced version ${previous}`;
  return `  bundle  ${bundle.projectId}/${bundle.env}  org ${bundle.orgId}  version ${bundle.version}  ${was}`;
}
