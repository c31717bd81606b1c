// The Vane server under load, as a child process of bench/http.bench.ts (which pins it to a core
// with taskset). Seeds the data folder with the demo bundle and one server-side key
// (sdk:read + sdk:write), then runs the built startNodeServer (dist/) with the production
// defaults: no limits passed, the store's default synchronous=FULL, the Parquet pipeline on. Prints one JSON line,
// {"url","key","pid","dataDir","projectId","bundleVersion"}, for the parent; stops cleanly on
// SIGTERM/SIGINT (a SIGKILL is also fine: what was acknowledged is committed).
//
// With --console TOKEN, as `vane serve --console --admin-token TOKEN` runs.
//
//   node --import tsx bench/http/serve-vane.ts --data /tmp/vane-bench [--port 0] [--host 127.0.0.1] [--console TOKEN]
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type * as NodeServer from "../../src/server/node.js";
import { seedBenchFolder } from "../scenarios/seed.js";

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    console: { type: "string" },
  },
});
const dataDir = values.data ?? mkdtempSync(join(tmpdir(), "vane-bench-"));
// The built server, as `vane serve` runs it (npm run build:ts first); this script itself runs under tsx.
const { startNodeServer } = (await import(new URL("../../dist/server/node.js", import.meta.url).href)) as typeof NodeServer;

// The bench bundle and a fresh server-side key, written before the server opens the folder.
const { key, projectId, version } = await seedBenchFolder(dataDir);
const consoleOn = values.console === undefined ? {} : { adminToken: values.console, console: { sessionSecret: randomBytes(32).toString("hex") } };
const server = await startNodeServer({ port: Number(values.port), host: values.host, dataDir, ...consoleOn });
process.stdout.write(
  `${JSON.stringify({ url: server.url, key, pid: process.pid, dataDir, projectId, bundleVersion: version })}\n`,
);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  // process.exit (not a signal death) so that --cpu-prof and --heap-prof write their files.
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error("serve-vane: close failed:", error);
      process.exit(1);
    },
  );
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
