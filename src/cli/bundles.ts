// `vane bundles put|validate|list|get|history|diff|rollback`: publishing one bundle with the
// checks `vane import` makes (and the version order), checking one without storing it, and
// seeing what is and was stored.
import { CliError, dataHelp, parseVerbArgs } from "./args.js";
import { diffVerb, historyVerb, rollbackVerb } from "./bundle-history.js";
import { fileLabel, readJsonFile } from "./import-file.js";
import { shortTime, table } from "./output.js";
import { fileProblems, publish, refuse, storedProblems } from "./publish.js";
import { REMOTE_STORE_OPTIONS, remoteHelp, storeExists, withStores, describeStore } from "./store-access.js";
import { noteNewStore, vaneCommand, whereArgs } from "./command-hints.js";
import type { Verb, VerbGroup } from "./verb.js";

const PUT_USAGE = `Usage: vane bundles put FILE|- [--rollback] [--data DIR]

Publishes the bundle in FILE (one bundle as JSON; - reads stdin) for its projectId/env,
replacing the stored one. Refused, with every problem listed, when it is invalid (unknown fields
included), a property schema does not compile, it does not fit the engine, it changes the stored
bundle without a new version, or its version is older than the stored one.
  --rollback   publish a version older than the stored one on purpose
${dataHelp(15)}
${remoteHelp(15)}`;

const VALIDATE_USAGE = `Usage: vane bundles validate FILE|- [--data DIR]

Checks the bundle in FILE (- reads stdin) as \`vane bundles put\` would, and stores nothing. With a data folder
that holds a store, also checks FILE against the stored bundle of its project/env (version).
${dataHelp(15)}
${remoteHelp(15)}`;

const LIST_USAGE = `Usage: vane bundles list [--data DIR]

Lists the stored bundles: project, env, organization, version, when stored.
${dataHelp(15)}
${remoteHelp(15)}`;

const GET_USAGE = `Usage: vane bundles get PROJECT [--env production] [--data DIR]

Prints the stored bundle of PROJECT and env as JSON.
  --env E      the environment (default production)
${dataHelp(15)}
${remoteHelp(15)}`;

const DATA_OPTION = REMOTE_STORE_OPTIONS;

const putVerb: Verb = {
  name: "put",
  summary: "publish a bundle from a JSON file",
  usage: PUT_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, {
      usage: PUT_USAGE,
      options: { ...DATA_OPTION, rollback: { type: "boolean", default: false } },
      positionals: [1, 1],
    });
    const file = positionals[0]!;
    const heading = `vane bundles put: refused ${fileLabel(file)}, nothing was written`;
    const read = readJsonFile(file);
    if (!read.ok) return refuse(io, heading, [read.problem]);
    // A refused file creates no data folder.
    const { problems } = await fileProblems(read.value);
    if (problems.length > 0) return refuse(io, heading, problems);
    noteNewStore(values, io);
    return withStores(values, "create", (stores) => publish(read.value, stores, { heading, rollback: values.rollback, where: values, io }));
  },
};

const validateVerb: Verb = {
  name: "validate",
  summary: "check a bundle file; store nothing",
  usage: VALIDATE_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, { usage: VALIDATE_USAGE, options: DATA_OPTION, positionals: [1, 1] });
    const file = positionals[0]!;
    const heading = `vane bundles validate: ${fileLabel(file)} would be refused`;
    const read = readJsonFile(file);
    if (!read.ok) return refuse(io, heading, [read.problem]);
    const { problems, bundle } = await fileProblems(read.value);
    if (bundle === undefined) return refuse(io, heading, problems);
    if (storeExists(values)) {
      const stale = await withStores(values, "existing", (stores) => storedProblems(bundle, stores.bundles, {}));
      if (stale.length > 0) return refuse(io, heading, stale);
    }
    io.out(`${fileLabel(file)}: a valid bundle for ${bundle.projectId}/${bundle.env} (org ${bundle.orgId}), version ${bundle.version}; nothing was stored`);
    return 0;
  },
};

const listVerb: Verb = {
  name: "list",
  summary: "list stored bundles",
  usage: LIST_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, { usage: LIST_USAGE, options: DATA_OPTION, positionals: [0, 0] });
    const bundles = await withStores(values, "existing", (stores) => stores.bundles.list());
    if (bundles.length === 0) {
      io.out(`No bundles in ${describeStore(values)}. Publish one with \`${vaneCommand()} bundles put FILE${whereArgs(values)}\`.`);
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
    const stored = await withStores(values, "existing", (stores) => stores.bundles.get(project, values.env));
    if (stored === undefined) throw new CliError(`no bundle for ${project}/${values.env}`);
    io.out(JSON.stringify(stored.bundle, null, 2));
    return 0;
  },
};

export const bundlesGroup: VerbGroup = {
  name: "bundles",
  summary: "publish, check, list, show and roll back config bundles",
  verbs: [putVerb, validateVerb, listVerb, getVerb, historyVerb, diffVerb, rollbackVerb],
};
