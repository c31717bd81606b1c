import { describe, expect, it } from "vitest";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { curlCommands, reachableUrl, seedFirstRun } from "../../src/cli/first-run.js";
import { inStore, jsonFile, secret, tempDir, vane } from "./helpers.js";

describe("first-run seeding", () => {
  it("seeds an empty store once: the demo bundle and a pk and an sk key pinned to demo", async () => {
    const data = tempDir();
    const now = Date.parse("2026-06-01T00:00:00.000Z");
    await inStore(data, async (stores) => {
      const run = await seedFirstRun(stores, now);
      expect(run?.bundle).toEqual(demoBundle("2026-06-01T00:00:00.000Z"));
      expect((await stores.bundles.get("demo", "production"))?.bundle).toEqual(run?.bundle);
      expect(run?.publishable.secret).toMatch(/^vane_pk_/);
      expect(run?.serverSide.secret).toMatch(/^vane_sk_/);
      expect(run?.serverSide.record).toMatchObject({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:read", "sdk:write"] });
      expect(await seedFirstRun(stores, now)).toBeUndefined();
      expect(await stores.keys.list()).toHaveLength(2);
    });
  });

  it("does not seed a store that holds only keys, or only bundles", async () => {
    const onlyKeys = tempDir();
    await vane("import", jsonFile({ keys: [{ key: secret("sk", "seed"), orgId: "o", scopes: ["sdk:read"] }] }), "--data", onlyKeys);
    await inStore(onlyKeys, async (stores) => {
      expect(await seedFirstRun(stores, Date.now())).toBeUndefined();
      expect(await stores.bundles.list()).toEqual([]);
    });
    const onlyBundles = tempDir();
    await vane("import", jsonFile({ bundles: [{ ...demoBundle("2026-01-01T00:00:00Z"), projectId: "other" }] }), "--data", onlyBundles);
    await inStore(onlyBundles, async (stores) => {
      expect(await seedFirstRun(stores, Date.now())).toBeUndefined();
      expect(await stores.keys.list()).toEqual([]);
    });
  });

  it("points the printed commands at loopback when the server binds every interface", () => {
    expect(reachableUrl("http://0.0.0.0:8787")).toBe("http://127.0.0.1:8787");
    expect(reachableUrl("http://[::]:8787")).toBe("http://[::1]:8787");
    expect(reachableUrl("http://10.0.0.5:8787")).toBe("http://10.0.0.5:8787");
    const commands = curlCommands("http://127.0.0.1:1", { pk: "PK", sk: "SK" }, Date.parse("2026-06-01T00:00:00Z"));
    expect(commands.filter((c) => c.startsWith("curl "))).toHaveLength(5);
    expect(commands.join("\n")).toContain('"timestamp":"2026-06-01T00:00:00.000Z"');
  });
});
