// What a benchmarked Vane serves: the demo bundle plus the decide scenario's bandit, and one fresh
// server-side key (sdk:read + sdk:write), written into a store before the server opens it, so its
// secret is known to the load generator (harness/vane-serve.ts startBenchVane, the edge runner).
import { createHash } from "node:crypto";
import type { Bundle } from "../../src/bundle/types.js";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { createKey } from "../../src/server/auth/key-admin.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { Stores } from "../../src/store/types.js";
import { BENCH_POLICY } from "./http.js";

const sha256 = (bytes: Uint8Array): Uint8Array => createHash("sha256").update(bytes).digest();

export interface Seeded {
  readonly key: string;
  readonly projectId: string;
  readonly version: string;
}

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

/** Stores the bench bundle and a new sk key; the caller opens and closes the store. */
export async function seedBench(stores: Pick<Stores, "bundles" | "keys">): Promise<Seeded> {
  const now = Date.now();
  const bundle = withBenchBandit(demoBundle(new Date(now).toISOString()));
  await stores.bundles.put(bundle, bundle.version);
  const tenant = { orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] };
  const { secret } = await createKey(stores.keys, { kind: "sk", ...tenant }, { sha256, now });
  return { key: secret, projectId: DEMO_PROJECT, version: bundle.version };
}

/** seedBench into a SQLite data folder, opened and closed around it. */
export async function seedBenchFolder(dataDir: string): Promise<Seeded> {
  const stores = openSqliteStores({ dataDir });
  try {
    return await seedBench(stores);
  } finally {
    stores.close();
  }
}
