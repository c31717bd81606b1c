// The Vane server under load, as a child process of bench/http.bench.ts (which pins it to a core
// with taskset). Seeds the data folder with the demo bundle and one server-side key
// (sdk:read + sdk:write), then runs startNodeServer with the production defaults: no limits
// passed, the store's default synchronous=FULL, the Parquet pipeline on. Prints one JSON line,
// {"url","key","pid","dataDir","projectId","bundleVersion"}, for the parent; stops cleanly on
// SIGTERM/SIGINT (a SIGKILL is also fine: what was acknowledged is committed).
//
// With --observe, as `vane serve --metrics on` runs: /metrics on, one JSON log line per request
// (written to /dev/null: the cost of building and writing each line, not of a log shipper).
//
//   node --import tsx bench/http/serve-vane.ts --data /tmp/vane-bench [--port 0] [--host 127.0.0.1] [--observe]
import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { pino } from "pino";
import type { Bundle } from "../../src/bundle/types.js";
import { BENCH_POLICY } from "./scenarios.js";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { createKey } from "../../src/server/auth/key-admin.js";
import { startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";

const { values } = parseArgs({
  options: {
    data: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    observe: { type: "boolean", default: false },
  },
});
const dataDir = values.data ?? mkdtempSync(join(tmpdir(), "vane-bench-"));
const sha256 = (bytes: Uint8Array): Uint8Array => createHash("sha256").update(bytes).digest();

/** The decide scenario's policy: a 4-arm Thompson bandit on its own layer (bench only). */
function withBenchBandit(bundle: Bundle): Bundle {
  const arms = ["a", "b", "c", "d"];
  return {
    ...bundle,
    parameters: [...bundle.parameters, { key: "recs.model", type: "string", default: "baseline", layerId: "recs", namespace: "recs" }],
    layers: [
      ...bundle.layers,
      {
        id: "recs",
        policies: [
          {
            id: BENCH_POLICY,
            key: BENCH_POLICY,
            state: "running",
            kind: "thompson",
            conditions: [],
            allocations: arms.map((arm) => ({ id: `recs-${arm}`, name: arm, key: arm, bucketRange: [0, 999] as [number, number], overrides: { "recs.model": arm } })),
            reward: { event: "click", type: "binary", windowSeconds: 3600 },
          },
        ],
      },
    ],
  };
}

/** The demo bundle and a fresh server-side key, written before the server opens the folder. */
async function seed(): Promise<{ key: string; version: string }> {
  const stores = openSqliteStores({ dataDir });
  try {
    const now = Date.now();
    const bundle = withBenchBandit(demoBundle(new Date(now).toISOString()));
    await stores.bundles.put(bundle, bundle.version);
    const tenant = { orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] };
    const { secret } = await createKey(stores.keys, { kind: "sk", ...tenant }, { sha256, now });
    return { key: secret, version: bundle.version };
  } finally {
    stores.close();
  }
}

const { key, version } = await seed();
const observe = values.observe ? { metrics: "on" as const, log: { level: "info" as const, destination: pino.destination({ dest: "/dev/null", sync: false }) } } : {};
const server = await startNodeServer({ port: Number(values.port), host: values.host, dataDir, ...observe });
process.stdout.write(
  `${JSON.stringify({ url: server.url, key, pid: process.pid, dataDir, projectId: DEMO_PROJECT, bundleVersion: version })}\n`,
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
