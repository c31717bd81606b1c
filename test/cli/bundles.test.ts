import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleFor, inStore, jsonFile, oversizedBundle, rowOf, tempDir, vane } from "./helpers.js";

describe("vane bundles", () => {
  it("puts a bundle, lists it, and shows it", async () => {
    const data = tempDir();
    const bundle = bundleFor("shop", "2026-01-01T00:00:00Z");
    const put = await vane("bundles", "put", jsonFile(bundle), "--data", data);
    expect(put.err).toBe(`note: ${data} had no vane.db, so this makes a new store there, which no running server uses (a server keeps vane.db in its --data folder; one on PostgreSQL needs its --store URL)`);
    expect(put.code).toBe(0);
    expect(put.out).toMatch(/^Stored shop\/production \(org org-1\) version 2026-01-01T00:00:00Z in /);
    expect(await inStore(data, async (stores) => (await stores.bundles.get("shop", "production"))?.bundle)).toEqual(bundle);
    await vane("bundles", "put", jsonFile(bundleFor("blog", "2026-02-01T00:00:00.000Z", "staging")), "--data", data);

    const list = await vane("bundles", "list", "--data", data);
    expect(list.code).toBe(0);
    const lines = list.out.split("\n");
    expect(lines[0]).toMatch(/^PROJECT +ENV +ORG +VERSION +STORED AT$/);
    expect(lines).toHaveLength(3);
    expect(rowOf(list.out, "blog")).toMatch(/^blog +staging +org-1 +2026-02-01T00:00:00\.000Z +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(rowOf(list.out, "shop")).toMatch(/^shop +production +org-1 +2026-01-01T00:00:00Z +\d{4}-/);

    const get = await vane("bundles", "get", "blog", "--env", "staging", "--data", data);
    expect(JSON.parse(get.out)).toEqual(bundleFor("blog", "2026-02-01T00:00:00.000Z", "staging"));
    expect(await vane("bundles", "get", "blog", "--data", data)).toMatchObject({ code: 1, err: "vane bundles get: no bundle for blog/production" });
  });

  it("replaces the stored bundle of the same project/env", async () => {
    const data = tempDir();
    await vane("bundles", "put", jsonFile(bundleFor("shop", "2026-01-01T00:00:00Z")), "--data", data);
    const newer = bundleFor("shop", "2026-05-01T00:00:00Z");
    const put = await vane("bundles", "put", jsonFile(newer), "--data", data);
    expect(put.out).toContain("version 2026-05-01T00:00:00Z, replacing version 2026-01-01T00:00:00Z");
    await inStore(data, async (stores) => {
      expect(await stores.bundles.list()).toHaveLength(1);
      expect((await stores.bundles.get("shop", "production"))?.bundle).toEqual(newer);
    });
  });

  it("refuses an invalid bundle with every problem at its path, and writes nothing", async () => {
    const data = tempDir();
    const bad = bundleFor("shop", "not-a-time");
    bad.parameters[0]!.default = 7;
    bad.eventDefinitions![1]!.propertySchema = { properties: { plan: { enum: "free" } } };
    const run = await vane("bundles", "put", jsonFile(bad), "--data", data);
    expect(run.code).toBe(1);
    expect(run.err).toContain("vane bundles put: refused");
    expect(run.err).toContain("nothing was written (3 problems)");
    expect(run.err).toContain('\n  version: must be an ISO 8601 timestamp with a time zone (got "not-a-time")');
    expect(run.err).toMatch(/\n {2}parameters\[0\]\.default: 7 is not a string/);
    expect(run.err).toContain('\n  eventDefinitions[1].propertySchema: event "signup": not a valid JSON Schema');
    expect(existsSync(data) && existsSync(join(data, "vane.db"))).toBe(false);
  });

  it("refuses a bundle the engine cannot hold, and one that changes content under the stored version", async () => {
    const data = tempDir();
    const big = await vane("bundles", "put", jsonFile(oversizedBundle()), "--data", data);
    expect(big.code).toBe(1);
    expect(big.err).toContain("\n  layers: running policies hold 5000 bucket ranges; the engine's range table holds at most 4096");
    const first = bundleFor("shop", "2026-01-01T00:00:00Z");
    await vane("bundles", "put", jsonFile(first), "--data", data);
    const changed = bundleFor("shop", "2026-01-01T00:00:00Z");
    changed.layers.pop();
    changed.parameters.pop();
    const run = await vane("bundles", "put", jsonFile(changed), "--data", data);
    expect(run.code).toBe(1);
    expect(run.err).toContain("\n  version: the stored bundle of shop/production has this version with other content");
    expect(await inStore(data, async (stores) => (await stores.bundles.get("shop", "production"))?.bundle)).toEqual(first);
  });

  it("refuses unreadable files and a folder without a store for list", async () => {
    const missing = await vane("bundles", "put", join(tempDir(), "nope.json"));
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/\(file\): cannot read .*nope\.json/);
    const list = await vane("bundles", "list", "--data", join(tempDir(), "none"));
    expect(list.code).toBe(1);
    expect(list.err).toContain("no Vane data in");
  });
});
