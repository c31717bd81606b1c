// `vane bundles history|diff|rollback`: the versions published for a project/env (a bounded
// number is kept, BUNDLE_HISTORY_LIMIT), what changed between two of them (or a file), and
// publishing an earlier version's content again as a new version.
import { existsSync } from "node:fs";
import { isRecord } from "../bundle/validate-values.js";
import { versionOf } from "../server/admin/bundle-operations.js";
import { BUNDLE_HISTORY_LIMIT } from "../store/types.js";
import { CliError, parseVerbArgs } from "./args.js";
import { diffBundles } from "../bundle/diff.js";
import { readJsonFile } from "./import-file.js";
import { shortTime, table } from "./output.js";
import { WHERE_HELP, WHERE_OPTIONS, projectOf, printPublication } from "./publish.js";
import { withStores } from "./store-access.js";
import type { Verb } from "./verb.js";


const HISTORY_USAGE = `Usage: vane bundles history [--project P] [--env E] [--data DIR]

Lists the versions published for a project and env, newest first, and by whom: an operator
(import, put, rollback) or the learner (learned weights); the last ${BUNDLE_HISTORY_LIMIT} of each are kept.
* marks the one served.
${WHERE_HELP}`;

const DIFF_USAGE = `Usage: vane bundles diff A B [--project P] [--env E] [--data DIR]

Shows what changed from A to B, one line per value: ~ changed, + added, - removed.
A and B are each a version from \`vane bundles history\`, "current" (the stored bundle), or a
JSON file.
${WHERE_HELP}`;

const ROLLBACK_USAGE = `Usage: vane bundles rollback VERSION [--project P] [--env E] [--data DIR]

Publishes the content of an earlier VERSION (see \`vane bundles history\`) again, as a new
version, through the same checks as \`vane bundles put\`.
${WHERE_HELP}`;

export const historyVerb: Verb = {
  name: "history",
  summary: "list the published versions of a project",
  usage: HISTORY_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, { usage: HISTORY_USAGE, options: WHERE_OPTIONS, positionals: [0, 0] });
    return withStores(values, "existing", async (stores) => {
      const project = await projectOf(stores.bundles, values.project, HISTORY_USAGE);
      const [history, current] = await Promise.all([stores.bundles.history(project, values.env), stores.bundles.version(project, values.env)]);
      if (history.length === 0) throw new CliError(`no published versions of ${project}/${values.env}`);
      const rows = history.map((h) => [h.version === current ? "*" : "", h.version, shortTime(h.storedAt), h.by, h.orgId]);
      // Learned weights published by a build whose history did not record them yet.
      if (current !== undefined && !history.some((h) => h.version === current)) rows.unshift(["*", current, "", "learner", ""]);
      io.out(table(["", "VERSION", "STORED AT", "BY", "ORG"], rows));
      return 0;
    });
  },
};

export const diffVerb: Verb = {
  name: "diff",
  summary: "show what changed between two versions or files",
  usage: DIFF_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, { usage: DIFF_USAGE, options: WHERE_OPTIONS, positionals: [2, 2] });
    // A file that exists is read as a bundle; anything else names a version in the store.
    const files = positionals.map((p) => (existsSync(p) ? fileValue(readJsonFile(p)) : undefined));
    const sides = files.every((f) => f !== undefined)
      ? files
      : await withStores(values, "existing", async (stores) => {
          const named = files.map((f) => (isRecord(f) ? f.projectId : undefined)).find((p) => typeof p === "string");
          const where = { project: await projectOf(stores.bundles, values.project ?? named, DIFF_USAGE), env: values.env };
          return Promise.all(positionals.map((p, i) => files[i] ?? versionOf(stores.bundles, p, where)));
        });
    const lines = diffBundles(sides[0], sides[1]);
    io.out(lines.length === 0 ? `${positionals[0]} and ${positionals[1]} are the same` : lines.join("\n"));
    return 0;
  },
};

export const rollbackVerb: Verb = {
  name: "rollback",
  summary: "publish an earlier version's content again",
  usage: ROLLBACK_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, { usage: ROLLBACK_USAGE, options: WHERE_OPTIONS, positionals: [1, 1] });
    const version = positionals[0]!;
    return withStores(values, "existing", async (stores) => {
      const where = { project: await projectOf(stores.bundles, values.project, ROLLBACK_USAGE), env: values.env };
      const heading = `vane bundles rollback: refused version ${version}, nothing was written`;
      const lead = `Rolling ${where.project}/${where.env} back to the content of version ${version}.`;
      return printPublication({ heading, lead, where: values, io }, () => stores.admin.rollbackBundle(where, version));
    });
  },
};

function fileValue(read: ReturnType<typeof readJsonFile>): unknown {
  if (!read.ok) throw new CliError(read.problem.message);
  return read.value;
}
