// `vane import FILE`: keys and bundles from one JSON file (decisions.md §8), all or nothing.
import { resolve } from "node:path";
import type { BundleProblem } from "../bundle/validate.js";
import { loadEngine } from "../engine/loader.js";
import { DEFAULT_LIMITS } from "../server/app.js";
import { type KeyInput, toKeyRecord } from "../server/auth/api-key.js";
import type { KeyRecord, Stores } from "../store/types.js";
import { dataHelp, DEFAULT_DATA_DIR, parseVerbArgs } from "./args.js";
import { type ImportPlan, type PlannedBundle, checkImport, readJsonFile, storeProblems } from "./import-file.js";
import { type Io, plural, problemList } from "./output.js";
import { nodeSha256, storeExists, withStores } from "./store-access.js";
import type { Verb } from "./verb.js";

const USAGE = `Usage: vane import FILE [--data DIR]

Loads keys and bundles from FILE: { "keys": [Key...], "bundles": [Bundle...] } (either may be absent).
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
      options: { data: { type: "string", default: DEFAULT_DATA_DIR } },
      positionals: [1, 1],
    });
    const file = positionals[0]!;
    const read = readJsonFile(file);
    if (!read.ok) return refuse(io, file, [read.problem]);
    const { plan, problems } = checkImport(read.value, await loadEngine());
    // A new store has nothing to compare with: refuse without creating the folder.
    if (problems.length > 0 && !storeExists(values.data)) return refuse(io, file, problems);
    return withStores(values.data, "create", async (stores) => {
      problems.push(...(await storeProblems(plan.bundles, stores.bundles)));
      if (problems.length > 0) return refuse(io, file, problems);
      const lines = await write(stores, plan);
      io.out([`Imported ${plural(plan.keys.length, "key")} and ${plural(plan.bundles.length, "bundle")} into ${resolve(values.data)}`, ...lines].join("\n"));
      if (lines.length > 0) io.out(`A running server sees them within about ${Math.ceil(Math.max(DEFAULT_LIMITS.bundleRefreshMs, DEFAULT_LIMITS.keyCacheMs) / 1000)} s.`);
      return 0;
    });
  },
};

function refuse(io: Io, file: string, problems: readonly BundleProblem[]): number {
  io.err(problemList(`vane import: refused ${file}, nothing was written`, problems));
  return 1;
}

/** Writes the checked plan; one summary line per key and bundle, never a secret. */
async function write(stores: Stores, plan: ImportPlan): Promise<string[]> {
  const now = new Date().toISOString();
  const lines: string[] = [];
  for (const input of plan.keys) lines.push(await writeKey(stores, input, now));
  for (const planned of plan.bundles) lines.push(await writeBundle(stores, planned, now));
  return lines;
}

async function writeKey(stores: Stores, input: KeyInput, now: string): Promise<string> {
  const fresh = toKeyRecord(input, nodeSha256, now);
  const existing = await stores.keys.byId(fresh.id);
  // The file decides the key's fields; its history (first stored, first revoked) stays.
  const record: KeyRecord =
    existing === undefined
      ? fresh
      : { ...fresh, createdAt: existing.createdAt, ...(fresh.revokedAt !== undefined && { revokedAt: existing.revokedAt ?? fresh.revokedAt }) };
  await stores.keys.put(record);
  const tenant = `${record.orgId}/${record.projectId ?? "(org)"}`;
  const state = record.revokedAt !== undefined ? ", revoked" : "";
  return `  key     ${record.id}  ${record.kind}  ${tenant}  ${record.scopes.join(",")}${state}  ${existing === undefined ? "new" : "replaced"}`;
}

async function writeBundle(stores: Stores, { bundle }: PlannedBundle, now: string): Promise<string> {
  const previous = await stores.bundles.version(bundle.projectId, bundle.env);
  await stores.bundles.put(bundle, now);
  const was = previous === undefined ? "new" : previous === bundle.version ? "unchanged" : `replaced version ${previous}`;
  return `  bundle  ${bundle.projectId}/${bundle.env}  org ${bundle.orgId}  version ${bundle.version}  ${was}`;
}
