// `vane flags set KEY VALUE` and `vane rollout POLICY PERCENT`: one change to the stored bundle,
// published as a new version with every check `vane bundles put` makes (bundle/edits.ts makes
// the change; the console makes the same through the same operation).
import { type BundleEdit, BundleEditError, parsePercent } from "../bundle/edits.js";
import { editBundle } from "../server/admin/bundle-operations.js";
import { UsageError, parseVerbArgs } from "./args.js";
import type { Io } from "./output.js";
import { WHERE_HELP, WHERE_OPTIONS, projectOf, publish } from "./publish.js";
import { withStores } from "./store-access.js";
import type { Verb, VerbGroup } from "./verb.js";


const SET_USAGE = `Usage: vane flags set KEY VALUE [--project P] [--env E] [--data DIR]

Serves VALUE as parameter KEY's default: a new version of the stored bundle, checked like
\`vane bundles put\`. VALUE is read as the parameter's type: true/false (on/off), a number, JSON,
or text. Running policies that override KEY keep doing so for their units (it says which).
${WHERE_HELP}`;

const ROLLOUT_USAGE = `Usage: vane rollout POLICY PERCENT [--project P] [--env E] [--data DIR]

Serves the one allocation of static policy POLICY (its id or key) to PERCENT (0-100) of units:
buckets 0 up to PERCENT of bucketCount, so a unit in the rollout stays in it as it grows. 0
pauses the policy. A new version of the stored bundle, checked like \`vane bundles put\`.
${WHERE_HELP}`;

type Where = { readonly project?: string | undefined; readonly env: string; readonly data: string };

/** Applies `edit` to the stored bundle and publishes the result as the next version. */
async function editAndPublish(how: { io: Io; usage: string }, where: Where, edit: BundleEdit): Promise<number> {
  const { io } = how;
  return withStores(where, "existing", async (stores) => {
    const project = await projectOf(stores.bundles, where.project, how.usage);
    const { bundle, note, stored } = await editBundle(stores.bundles, { where: { project, env: where.env }, edit }, Date.now());
    const code = await publish(bundle, stores, { heading: `refused the change to ${project}/${where.env}, nothing was written`, where, io, base: stored.version });
    if (code === 0 && note !== "") io.out(note);
    return code;
  });
}

const setVerb: Verb = {
  name: "set",
  summary: "serve a value as a parameter's default",
  usage: SET_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, { usage: SET_USAGE, options: WHERE_OPTIONS, positionals: [2, 2] });
    const [key, value] = positionals as [string, string];
    return editAndPublish({ io, usage: SET_USAGE }, values, { kind: "flag", key, value });
  },
};

export const flagsGroup: VerbGroup = {
  name: "flags",
  summary: "change a parameter's served value",
  verbs: [setVerb],
};

export const rolloutVerb: Verb = {
  name: "rollout",
  summary: "move a rollout to a percentage of units",
  usage: ROLLOUT_USAGE,
  async run(args, io) {
    const { values, positionals } = parseVerbArgs(args, { usage: ROLLOUT_USAGE, options: WHERE_OPTIONS, positionals: [2, 2] });
    const [policy, percent] = positionals as [string, string];
    try {
      parsePercent(percent);
    } catch (error) {
      if (error instanceof BundleEditError) throw new UsageError(error.message, ROLLOUT_USAGE);
      throw error;
    }
    return editAndPublish({ io, usage: ROLLOUT_USAGE }, values, { kind: "rollout", policy, percent });
  },
};
