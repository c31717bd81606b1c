// `vane bundles put|list|get`: publishing one bundle with the checks `vane import` makes, and
// seeing what is stored.
import { resolve } from "node:path";
import { loadEngine } from "../engine/loader.js";
import { DEFAULT_LIMITS } from "../server/app.js";
import { CliError, dataHelp, DEFAULT_DATA_DIR, parseVerbArgs } from "./args.js";
import { checkBundle, versionProblems } from "./bundle-checks.js";
import { readJsonFile } from "./import-file.js";
import { problemList, shortTime, table } from "./output.js";
import { withStores } from "./store-access.js";
import type { Verb, VerbGroup } from "./verb.js";

const PUT_USAGE = `Usage: vane bundles put FILE [--data DIR]

Publishes the bundle in FILE (one bundle as JSON) for its projectId/env, replacing the stored
one. Refused, with every problem listed, when it is invalid, a property schema does not compile,
it does not fit the engine, or it changes the stored bundle without a new version.
${dataHelp(15)}`;

const LIST_USAGE = `Usage: vane bundles list [--data DIR]

Lists the stored bundles: project, env, organization, version, when stored.
${dataHelp(15)}`;

const GET_USAGE = `Usage: vane bundles get PROJECT [--env production] [--data DIR]

Prints the stored bundle of PROJECT and env as JSON.
  --env E      the environment (default production)
${dataHelp(15)}`;

const DATA_OPTION = { data: { type: "string", default: DEFAULT_DATA_DIR } } as const;

const putVerb: Verb = {
  name: "put",
  summary: "publish a bundle from a JSON file",
  usage: PUT_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, { usage: PUT_USAGE, options: DATA_OPTION, positionals: [1, 1] });
    const file = positionals[0]!;
    const heading = `vane bundles put: refused ${file}, nothing was written`;
    const read = readJsonFile(file);
    if (!read.ok) {
      io.err(problemList(heading, [read.problem]));
      return 1;
    }
    const { problems, bundle } = checkBundle(read.value, "", await loadEngine());
    if (bundle === undefined) {
      io.err(problemList(heading, problems));
      return 1;
    }
    return withStores(values.data, "create", async (stores) => {
      const stale = await versionProblems(bundle, "", stores.bundles);
      if (stale.length > 0) {
        io.err(problemList(heading, stale));
        return 1;
      }
      const previous = await stores.bundles.version(bundle.projectId, bundle.env);
      await stores.bundles.put(bundle, new Date().toISOString());
      const was = previous === undefined ? "" : previous === bundle.version ? " (unchanged)" : `, replacing version ${previous}`;
      io.out(`Stored ${bundle.projectId}/${bundle.env} (org ${bundle.orgId}) version ${bundle.version}${was} in ${resolve(values.data)}`);
      io.out(`A running server serves it within about ${Math.ceil(DEFAULT_LIMITS.bundleRefreshMs / 1000)} s.`);
      return 0;
    });
  },
};

const listVerb: Verb = {
  name: "list",
  summary: "list stored bundles",
  usage: LIST_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, { usage: LIST_USAGE, options: DATA_OPTION, positionals: [0, 0] });
    const bundles = await withStores(values.data, "existing", (stores) => stores.bundles.list());
    if (bundles.length === 0) {
      io.out(`No bundles in ${resolve(values.data)}. Publish one with \`vane bundles put FILE\`.`);
      return 0;
    }
    const rows = bundles.map((b) => [b.projectId, b.env, b.orgId, b.version, shortTime(b.storedAt)]);
    io.out(table(["PROJECT", "ENV", "ORG", "VERSION", "STORED AT"], rows));
    return 0;
  },
};

const getVerb: Verb = {
  name: "get",
  summary: "print a stored bundle as JSON",
  usage: GET_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, {
      usage: GET_USAGE,
      options: { ...DATA_OPTION, env: { type: "string", default: "production" } },
      positionals: [1, 1],
    });
    const project = positionals[0]!;
    const stored = await withStores(values.data, "existing", (stores) => stores.bundles.get(project, values.env));
    if (stored === undefined) throw new CliError(`no bundle for ${project}/${values.env}`);
    io.out(JSON.stringify(stored.bundle, null, 2));
    return 0;
  },
};

export const bundlesGroup: VerbGroup = {
  name: "bundles",
  summary: "publish, list and show config bundles",
  verbs: [putVerb, listVerb, getVerb],
};
