// The bundle cache's hit path: a lookup within the refresh interval answers the copy it holds
// with an answer made once per version (the same object each time: nothing allocated per request),
// and a new version gets answers of its own.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Engine, loadEngine } from "../../src/index.js";
import { BundleCache } from "../../src/server/bundle-cache.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { sampleBundle } from "../bundle/bundles.js";

let engine: Engine;
beforeAll(async () => {
  engine = await loadEngine();
});

const dataDir = mkdtempSync(join(tmpdir(), "vane-bundle-cache-"));
const stores = openSqliteStores({ dataDir });
afterAll(() => {
  stores.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("BundleCache", () => {
  it("answers a held copy with the same answer object until the version changes", async () => {
    let now = 1_000;
    const clock = { now: () => now };
    const bundle = sampleBundle();
    await stores.bundles.put(bundle, new Date(0).toISOString());
    const cache = new BundleCache({ bundles: stores.bundles, engine, clock, refreshMs: 1_000, staleMs: 60_000 });
    const first = await cache.lookup(bundle.projectId, bundle.env);
    expect(first).toMatchObject({ status: "found", stale: false });
    expect(cache.lookup(bundle.projectId, bundle.env)).toBe(first);
    now += 5_000; // past the refresh: the store is asked, the version is the same
    expect(await cache.lookup(bundle.projectId, bundle.env)).toBe(first);
    await stores.bundles.put({ ...bundle, version: "2026-11-22T00:00:00.000Z" }, new Date(0).toISOString());
    now += 5_000;
    const second = await cache.lookup(bundle.projectId, bundle.env);
    expect(second).not.toBe(first);
    expect(second.status === "found" && second.entry.bundle.version).toBe("2026-11-22T00:00:00.000Z");
    expect(cache.lookup(bundle.projectId, bundle.env)).toBe(second);
  });
});
