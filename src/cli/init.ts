// `vane init`: a new project in one step — a bundle file to edit (one boolean flag, with the
// schema for editors), published, and a publishable and a server-side key for it, printed once.
import { existsSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Bundle } from "../bundle/types.js";
import { CliError, dataHelp, parseVerbArgs, STORE_OPTIONS } from "./args.js";
import { noteNewStore, shellWord, vaneCommand, whereArgs } from "./command-hints.js";
import { publish } from "./publish.js";
import { withStores } from "./store-access.js";
import type { Verb } from "./verb.js";

const DEFAULT_FILE = "vane.bundle.json";
/** The schema shipped with this vane: in its clone, or in the node_modules of a project that depends on it. */
const SCHEMA_FILE = fileURLToPath(new URL("../../schema/bundle.schema.json", import.meta.url));

const USAGE = `Usage: vane init [--project P] [--org O] [--env E] [--file ${DEFAULT_FILE}] [--data DIR]

Starts a project: writes a bundle file with one boolean flag (docs/bundles.md explains every
field), publishes it, and creates a publishable (pk) and a server-side (sk) key for the project,
printed once. Refuses to overwrite the file or a project that has a bundle.
  --project P  the project id (default my-project)
  --org O      the organization id (default my-org)
  --env E      the environment (default production)
  --file F     the bundle file to write (default ${DEFAULT_FILE})
${dataHelp(15)}`;

/** The schema's path as seen from the bundle file's folder, as editors resolve `$schema`. */
function schemaPathFrom(file: string): string {
  const path = relative(dirname(resolve(file)), SCHEMA_FILE).split(sep).join("/");
  return path.startsWith("../") ? path : `./${path}`;
}

function starterBundle(where: { org: string; project: string; env: string; file: string }, version: string): Bundle {
  return {
    $schema: schemaPathFrom(where.file),
    version,
    orgId: where.org,
    projectId: where.project,
    env: where.env,
    hashing: { unitKey: "userId" },
    parameters: [{ key: "app.newFeature", type: "boolean", default: false, layerId: "app", namespace: "app" }],
    layers: [
      {
        id: "app",
        policies: [
          {
            id: "new-feature-rollout",
            key: "new-feature-rollout",
            state: "paused",
            kind: "static",
            conditions: [],
            allocations: [{ id: "on", name: "on", key: "on", bucketRange: [0, 99], overrides: { "app.newFeature": true } }],
          },
        ],
      },
    ],
    eventDefinitions: [{ name: "purchase", propertySchema: { type: "object", properties: { orderId: { type: "string" } } }, schemaEnforcement: "warn" }],
  };
}

export const initVerb: Verb = {
  name: "init",
  summary: "start a project: a bundle file, published, and its keys",
  usage: USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, {
      usage: USAGE,
      options: {
        ...STORE_OPTIONS,
        project: { type: "string", default: "my-project" },
        org: { type: "string", default: "my-org" },
        env: { type: "string", default: "production" },
        file: { type: "string", default: DEFAULT_FILE },
      },
      positionals: [0, 0],
    });
    if (existsSync(values.file)) throw new CliError(`${resolve(values.file)} exists; pass --file for another name`);
    const now = Date.now();
    const bundle = starterBundle(values, new Date(now).toISOString());
    noteNewStore(values, io);
    return withStores(values, "create", async (stores) => {
      if ((await stores.bundles.version(values.project, values.env)) !== undefined) {
        throw new CliError(`${values.project}/${values.env} has a bundle already (${vaneCommand()} bundles get ${shellWord(values.project)}${whereArgs(values)})`);
      }
      const code = await publish(bundle, stores, { heading: `vane init: refused, nothing was written`, where: values, io });
      if (code !== 0) return code;
      writeFileSync(values.file, `${JSON.stringify(bundle, null, 2)}\n`);
      const tenant = { orgId: values.org, projectId: values.project };
      const pk = await stores.admin.createKey({ kind: "pk", ...tenant, scopes: ["sdk:read", "sdk:write"] });
      const sk = await stores.admin.createKey({ kind: "sk", ...tenant, scopes: ["sdk:read", "sdk:write"] });
      const [vane, file, store] = [vaneCommand(), shellWord(values.file), whereArgs(values)];
      const project = ` --project ${shellWord(values.project)}${values.env === "production" ? "" : ` --env ${shellWord(values.env)}`}${store}`;
      const how = vane === "vane" ? "" : " (npx vane runs the vane of this clone, or of your project's node_modules; `npm link` in the clone puts vane on your PATH)";
      io.out(
        [
          `Wrote ${resolve(values.file)}`,
          "Keys (shown once; the store keeps only their hashes):",
          `  publishable key  ${pk.secret}   browsers: resolve locally, send events`,
          `  server-side key  ${sk.secret}   servers: /v1/resolve, /v1/decide`,
          `Next${how}:`,
          `  # edit ${file}, then check it and publish it`,
          `  ${vane} bundles validate ${file}${store} && ${vane} bundles put ${file}${store}`,
          `  # serve app.newFeature = true to 10% of users, then to everyone`,
          `  ${vane} rollout new-feature-rollout 10${project}`,
          `  ${vane} flags set app.newFeature true${project}`,
        ].join("\n"),
      );
      return 0;
    });
  },
};
