// `vane edge dev|init`: the Worker (src/edge/worker.ts) on this machine, and the files to deploy it.
// dev runs the built dist/edge/ in workerd through miniflare with D1, KV, R2, the Queue and the
// Durable Objects kept under --persist, builds what is missing in a checkout, prints the URL once
// /health answers and stops it all on SIGINT or SIGTERM. init writes wrangler.toml and the D1
// migration for `wrangler deploy` (docs/edge.md).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BUILT_WORKER_DIR, MiniflareMissing, startLocalEdge } from "../edge/local.js";
import { wranglerToml } from "../edge/wrangler-config.js";
import { schemaMigration } from "../store/edge/schema.js";
import { CliError, integerOption, parseVerbArgs } from "./args.js";
import { stopSignals } from "./serve.js";
import type { Verb, VerbGroup } from "./verb.js";

const DEFAULT_PERSIST_DIR = ".vane-edge";
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

const DEV_USAGE = `Usage: vane edge dev [--port 8787] [--host 127.0.0.1] [--persist ${DEFAULT_PERSIST_DIR}] [--admin-token T] [--console]

Runs the API as the Cloudflare Worker runs it, in workerd on this machine (through miniflare:
npm install miniflare if it is missing), on local D1, KV, R2, Queue and Durable Objects kept
under the --persist folder. Prints the URL once /health answers; stops on Ctrl-C or SIGTERM.
  --port N         port to listen on (default 8787; 0 picks a free one)
  --host H         address to bind (default 127.0.0.1)
  --persist DIR    where the local D1, KV, R2 and Durable Objects keep their data
                   (default ${DEFAULT_PERSIST_DIR}); events still in the queue at a stop are lost
  --admin-token T  the admin API's token (default: the VANE_ADMIN_TOKEN environment variable)
  --console        serve the console at /console (the Worker's VANE_CONSOLE=on; docs/console.md):
                   sign in with the admin token or an API key with the console:read scope`;

const INIT_USAGE = `Usage: vane edge init [--name vane] [--dir .]

Writes wrangler.toml (the Worker, its D1, KV, R2, Queue and Durable Object bindings) and
migrations/0001_vane.sql (the D1 schema) into --dir, for \`wrangler deploy\`: docs/edge.md walks
through creating the resources and deploying. Refuses to overwrite either file.
  --name N   the Worker's name (default vane)
  --dir D    where to write them (default the current folder)`;

/** In a checkout, `npm run build` makes dist/edge/; an installed package ships it. */
function buildIfMissing(log: (line: string) => void): void {
  if (existsSync(join(BUILT_WORKER_DIR, "worker.js")) && existsSync(join(BUILT_WORKER_DIR, "vane.wasm"))) return;
  if (!existsSync(join(ROOT, "scripts/build-edge.mjs"))) throw new CliError(`the Worker is missing from this install (${BUILT_WORKER_DIR})`);
  // The Worker bundles the engine and the console's files: each built first when missing.
  const steps = [...(existsSync(join(ROOT, "build/vane.wasm")) ? [] : ["build:wasm"]), ...(existsSync(join(ROOT, "dist/console/manifest.json")) ? [] : ["build:console"]), "build:edge"];
  for (const step of steps) {
    log(`vane edge dev: building (npm run ${step})`);
    const run = spawnSync("npm", ["run", "--silent", step], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
    if (run.status !== 0) throw new CliError(`npm run ${step} failed`);
  }
}

const devVerb: Verb = {
  name: "dev",
  summary: "run the Worker locally in workerd",
  usage: DEV_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, {
      usage: DEV_USAGE,
      options: { port: { type: "string", default: "8787" }, host: { type: "string", default: "127.0.0.1" }, persist: { type: "string", default: DEFAULT_PERSIST_DIR }, "admin-token": { type: "string" }, console: { type: "boolean", default: false } },
      positionals: [0, 0],
    });
    const port = integerOption(values.port, "--port", { min: 0, max: 65535, usage: DEV_USAGE });
    const adminToken = values["admin-token"] ?? (process.env.VANE_ADMIN_TOKEN || undefined);
    buildIfMissing(io.err);
    const persistDir = resolve(values.persist);
    mkdirSync(persistDir, { recursive: true });
    const stop = stopSignals();
    const ours = { SIGINT: process.listeners("SIGINT"), SIGTERM: process.listeners("SIGTERM") };
    let edge;
    try {
      edge = await startLocalEdge({ port, host: values.host, persistDir, adminToken, console: values.console });
    } catch (error) {
      stop.cancel();
      if (error instanceof MiniflareMissing) throw new CliError(error.message);
      throw error;
    }
    // Miniflare adds its own exit on these signals (status 143, before our close could run): the verb stops workerd itself.
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      for (const listener of process.listeners(signal)) if (!ours[signal].includes(listener)) process.off(signal, listener);
    }
    io.out(`Vane (edge) is listening on ${edge.url} (workerd, data in ${values.persist})`);
    if (values.console) io.out(`Console: ${edge.url}/console (sign in with the admin token or an API key with the console:read scope)`);
    io.out("Stop with Ctrl-C.");
    const signal = await stop.received;
    io.err(`vane edge dev: ${signal}, stopping`);
    await edge.close();
    io.err("vane edge dev: stopped");
    return 0;
  },
};

const initVerb: Verb = {
  name: "init",
  summary: "write wrangler.toml and the D1 migration for wrangler deploy",
  usage: INIT_USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, { usage: INIT_USAGE, options: { name: { type: "string", default: "vane" }, dir: { type: "string", default: "." } }, positionals: [0, 0] });
    const dir = resolve(values.dir);
    const files = { toml: join(dir, "wrangler.toml"), migration: join(dir, "migrations/0001_vane.sql") };
    for (const file of Object.values(files)) if (existsSync(file)) throw new CliError(`${relative(process.cwd(), file)} exists; not overwritten`);
    // wrangler bundles from where wrangler.toml is: the Worker as installed under node_modules.
    const main = relative(dir, join(BUILT_WORKER_DIR, "worker.js")).split("\\").join("/");
    mkdirSync(dirname(files.migration), { recursive: true });
    writeFileSync(files.toml, wranglerToml({ name: values.name, main }));
    writeFileSync(files.migration, schemaMigration());
    io.out(`Wrote ${relative(process.cwd(), files.toml)} and ${relative(process.cwd(), files.migration)}; docs/edge.md says what to run next.`);
    return 0;
  },
};

export const edgeGroup: VerbGroup = { name: "edge", summary: "run or deploy the API as a Cloudflare Worker", verbs: [devVerb, initVerb] };
