// `vane import FILE`: keys and bundles from one JSON file (decisions.md §8), all or nothing, checked
// and written by the admin operations (server/admin/import-operation.ts), here or on the server.
import type { BundleProblem } from "../bundle/validate.js";
import { loadEngine } from "../engine/loader.js";
import { DEFAULT_LIMITS } from "../server/app.js";
import { checkImport } from "../server/admin/import-checks.js";
import type { Imported, PublicKey, Published } from "../server/admin/operations.js";
import { AdminRefusal } from "../server/admin/refusal.js";
import { dataHelp, parseVerbArgs } from "./args.js";
import { fileLabel, readJsonFile } from "./import-file.js";
import { type Io, plural, problemList } from "./output.js";
import { REMOTE_STORE_OPTIONS, remoteHelp, storeExists, withStores, describeStore } from "./store-access.js";
import { noteNewStore } from "./command-hints.js";
import type { Verb } from "./verb.js";

const USAGE = `Usage: vane import FILE|- [--data DIR]

Loads keys and bundles from FILE (- reads stdin): { "keys": [Key...], "bundles": [Bundle...] } (either may be absent).
  Key  { key, orgId, projectId?, scopes, expiresAt?, revoked?, rateLimit? }
       key: the full secret, vane_<pk|sk|mk|ak>_<32+ base62/base64url characters>
       scopes: sdk:read, sdk:write, mgmt:read, mgmt:write, admin, console:read
       rateLimit: { requestsPerSecond, burst }
Everything is checked first: one problem refuses the whole file and nothing is written.
A bundle for a project/env that has one replaces it; a key already stored is replaced, but a
revocation or rotation done since stays (an import never un-revokes or un-rotates a key).
${dataHelp(15)}
${remoteHelp(15)}`;

export const importVerb: Verb = {
  name: "import",
  summary: "load keys and bundles from a JSON file",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, {
      usage: USAGE,
      options: REMOTE_STORE_OPTIONS,
      positionals: [1, 1],
    });
    const file = positionals[0]!;
    const read = readJsonFile(file);
    if (!read.ok) return refuse(io, file, [read.problem]);
    const { problems } = checkImport(read.value, await loadEngine());
    // A new store has nothing to compare with: refuse without creating the folder.
    if (problems.length > 0 && !storeExists(values)) return refuse(io, file, problems);
    noteNewStore(values, io);
    return withStores(values, "create", async (stores) => {
      let imported: Imported;
      try {
        imported = await stores.admin.importFile(read.value);
      } catch (error) {
        if (error instanceof AdminRefusal && error.problems.length > 0) return refuse(io, file, error.problems);
        throw error;
      }
      const lines = [...imported.keys.map(keyLine), ...imported.bundles.map(bundleLine)];
      io.out([`Imported ${plural(imported.keys.length, "key")} and ${plural(imported.bundles.length, "bundle")} into ${describeStore(values)}`, ...lines].join("\n"));
      if (lines.length > 0) io.out(`A running server sees them within about ${Math.ceil(Math.max(DEFAULT_LIMITS.bundleRefreshMs, DEFAULT_LIMITS.keyCacheMs) / 1000)} s.`);
      return 0;
    });
  },
};

function refuse(io: Io, file: string, problems: readonly BundleProblem[]): number {
  io.err(problemList(`vane import: refused ${fileLabel(file)}, nothing was written`, problems));
  return 1;
}

function keyLine({ key: record, replaced }: { key: PublicKey; replaced: boolean }): string {
  const tenant = `${record.orgId}/${record.projectId ?? "(org)"}`;
  const state = record.revokedAt !== undefined ? ", revoked" : "";
  return `  key     ${record.id}  ${record.kind}  ${tenant}  ${record.scopes.join(",")}${state}  ${replaced ? "replaced" : "new"}`;
}

function bundleLine({ stored: bundle, previous }: Published): string {
  const was = previous === undefined ? "new" : previous === bundle.version ? "unchanged" : `replaced version ${previous}`;
  return `  bundle  ${bundle.projectId}/${bundle.env}  org ${bundle.orgId}  version ${bundle.version}  ${was}`;
}
