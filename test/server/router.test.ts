// Every route fits Hono's RegExpRouter (one regular expression for all paths, matched without
// allocating): a route it refuses, such as a static segment beside a parameter
// (/v1/decide/batch beside /v1/decide/:policyId), silently sends every request through the slower
// TrieRouter instead.
import { describe, expect, it } from "vitest";
import { loadEngine } from "../../src/engine/loader.js";
import { createApp } from "../../src/server/app.js";
import { PrometheusMetrics } from "../../src/server/observability/prometheus.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";

describe("the app's router", () => {
  it("is RegExpRouter, with /metrics and every other route registered", async () => {
    const stores = openSqliteStores({ dataDir: ":memory:" });
    try {
      const app = createApp({ engine: await loadEngine(), stores, version: "test", observability: { metrics: new PrometheusMetrics({ processMetrics: false }), metricsRoute: true } });
      expect((await app.request("/health")).status).toBe(200);
      expect(app.router.name).toBe("SmartRouter + RegExpRouter");
    } finally {
      stores.close();
    }
  });
});
