import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleFor, inStore, jsonFile, oversizedBundle, secret, sha256Hex, tempDir, vane } from "./helpers.js";

const PK = secret("pk", "import-pk");
const MK = secret("mk", "import-mk");
const REVOKED = secret("sk", "import-revoked");

const goodFile = () => ({
  keys: [
    { key: PK, orgId: "org-1", projectId: "shop", scopes: ["sdk:read", "sdk:write"] },
    { key: MK, orgId: "org-1", scopes: ["mgmt:read", "mgmt:write"], expiresAt: "2099-01-01T00:00:00Z", rateLimit: { requestsPerSecond: 5, burst: 10 } },
    { key: REVOKED, orgId: "org-1", projectId: "shop", scopes: ["sdk:read"], revoked: true },
  ],
  bundles: [bundleFor("shop", "2026-01-01T00:00:00Z"), bundleFor("shop", "2026-01-01T00:00:00Z", "staging")],
});

describe("vane import", () => {
  it("stores every key (hashed) and bundle of a good file, and prints ids, never secrets", async () => {
    const data = tempDir();
    const run = await vane("import", jsonFile(goodFile()), "--data", data);
    expect(run.err).toMatch(/^note: .* had no vane\.db, so this makes a new store there, which no running server uses/);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^Imported 3 keys and 2 bundles into /);
    expect(run.out).toContain("shop/production  org org-1  version 2026-01-01T00:00:00Z  new");
    for (const s of [PK, MK, REVOKED]) {
      expect(run.out).not.toContain(s);
      expect(run.out).toContain(`key_${sha256Hex(s).slice(0, 16)}`);
    }
    await inStore(data, async (stores) => {
      const pk = await stores.keys.byHash(sha256Hex(PK));
      expect(pk).toMatchObject({ kind: "pk", orgId: "org-1", projectId: "shop", scopes: ["sdk:read", "sdk:write"] });
      expect(pk?.revokedAt).toBeUndefined();
      const mk = await stores.keys.byHash(sha256Hex(MK));
      expect(mk).toMatchObject({ kind: "mk", expiresAt: "2099-01-01T00:00:00Z", rateLimit: { requestsPerSecond: 5, burst: 10 } });
      expect(mk?.projectId).toBeUndefined();
      expect((await stores.keys.byHash(sha256Hex(REVOKED)))?.revokedAt).toBeDefined();
      expect((await stores.bundles.get("shop", "staging"))?.bundle).toEqual(goodFile().bundles[1]);
      expect((await stores.bundles.list()).map((b) => `${b.projectId}/${b.env}`)).toEqual(["shop/production", "shop/staging"]);
    });
  });

  it("refuses a bad file with every problem and its path, and writes nothing", async () => {
    const badRange = bundleFor("p1", "2026-01-01T00:00:00Z");
    badRange.layers[1]!.policies[0]!.allocations[0]!.bucketRange = [0, 2000];
    const badSchema = bundleFor("p2", "2026-01-01T00:00:00Z");
    badSchema.eventDefinitions![0]!.propertySchema = { type: "nope" };
    const file = {
      keys: [
        { key: secret("sk", "ok"), orgId: "org-1", scopes: ["sdk:read"] },
        { key: "vane_xx_short", orgId: "", scopes: ["sdk:read", "bogus", "sdk:read"], expiresAt: "tomorrow", scope: [] },
        { key: secret("pk", "browser"), orgId: "org-1", scopes: ["admin"], rateLimit: { requestsPerSecond: 0, burst: 0.5 } },
        { key: secret("sk", "ok"), orgId: "org-1", scopes: [] },
      ],
      bundles: [bundleFor("good", "2026-01-01T00:00:00Z"), badRange, badSchema, oversizedBundle(), bundleFor("good", "2026-02-01T00:00:00Z"), 42],
    };
    const data = tempDir();
    await vane("import", jsonFile({ bundles: [bundleFor("kept", "2026-01-01T00:00:00Z")] }), "--data", data);
    const run = await vane("import", jsonFile(file), "--data", data);
    expect(run.code).toBe(1);
    expect(run.out).toBe("");
    const expected = [
      "keys[1].scope: is not a known field",
      "keys[1].key: must have the form vane_<pk|sk|mk|ak>_",
      'keys[1].orgId: must be a non-empty string (got "")',
      "keys[1].expiresAt: must be an ISO 8601 timestamp",
      'keys[1].scopes[1]: must be one of sdk:read, sdk:write, mgmt:read, mgmt:write, admin, console:read (got "bogus")',
      'keys[1].scopes[2]: "sdk:read" is listed twice',
      "keys[2].scopes[0]: a publishable (pk) key ships in browser code",
      "keys[2].rateLimit.requestsPerSecond: must be a positive finite number (got 0)",
      "keys[2].rateLimit.burst: must be a finite number >= 1 (got 0.5)",
      "keys[3].scopes: must list at least one scope",
      "keys[3].key: duplicates keys[0].key",
      "bundles[1].layers[1].policies[0].allocations[0].bucketRange[1]: 2000 is outside 0..999",
      'bundles[2].eventDefinitions[0].propertySchema: event "purchase": not a valid JSON Schema',
      "bundles[3].layers: running policies hold 5000 bucket ranges; the engine's range table holds at most 4096",
      "bundles[4]: is for good/production like bundles[0]",
      "bundles[5]: must be an object (got 42)",
    ];
    for (const line of expected) expect(run.err).toContain(`  ${line}`);
    expect(run.err).toContain(`nothing was written (${expected.length} problems)`);
    expect(run.err).not.toContain("vane_xx_short");
    await inStore(data, async (stores) => {
      expect((await stores.bundles.list()).map((b) => b.projectId)).toEqual(["kept"]);
      expect(await stores.keys.list()).toEqual([]);
    });
  });

  it("does not create the data folder for a refused file", async () => {
    const data = join(tempDir(), "fresh");
    const run = await vane("import", jsonFile({ keys: [{ key: "nope", orgId: "o", scopes: ["sdk:read"] }] }), "--data", data);
    expect(run.code).toBe(1);
    expect(existsSync(data)).toBe(false);
  });

  it.each([
    ["an unreadable file", join(tempDir(), "missing.json"), /\(file\): cannot read .*missing\.json: ENOENT/],
    ["invalid JSON", jsonFile('{"keys": ['), /\(file\): .* is not valid JSON: /],
    ["a top level that is not an object", jsonFile([]), /\(root\): must be an object \{ "keys": \[\.\.\.\], "bundles": \[\.\.\.\] \} \(got an array\)/],
    ["keys that are not an array", jsonFile({ keys: {} }), /keys: must be an array \(got an object\)/],
    ["a file with neither keys nor bundles", jsonFile({}), /\(root\): holds neither "keys" nor "bundles"/],
  ])("refuses %s with exit code 1", async (_what, file, message) => {
    const data = tempDir();
    const run = await vane("import", file, "--data", data);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(message);
    expect(readdirSync(data)).toEqual([]);
  });

  it("never echoes a secret from a file that is not JSON", async () => {
    const run = await vane("import", jsonFile(`{"keys":[{"orgId":"o","scopes":["sdk:read"],"key":${PK}}]}`), "--data", tempDir());
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/is not valid JSON/);
    expect(run.err).not.toContain(PK.slice(0, 10));
  });

  it("replaces the bundle of a project/env that has one, and keeps others", async () => {
    const data = tempDir();
    await vane("import", jsonFile({ bundles: [bundleFor("shop", "2026-01-01T00:00:00Z"), bundleFor("blog", "2026-01-01T00:00:00Z")] }), "--data", data);
    const newer = bundleFor("shop", "2026-03-01T00:00:00Z");
    newer.parameters[0]!.default = "red";
    const run = await vane("import", jsonFile({ bundles: [newer] }), "--data", data);
    expect(run.code).toBe(0);
    expect(run.out).toContain("shop/production  org org-1  version 2026-03-01T00:00:00Z  replaced version 2026-01-01T00:00:00Z");
    await inStore(data, async (stores) => {
      expect((await stores.bundles.get("shop", "production"))?.bundle).toEqual(newer);
      expect((await stores.bundles.list()).map((b) => `${b.projectId}:${b.version}`)).toEqual(["blog:2026-01-01T00:00:00Z", "shop:2026-03-01T00:00:00Z"]);
    });
  });

  it("refuses a changed bundle that keeps the stored version; the same bundle again is fine", async () => {
    const data = tempDir();
    const first = bundleFor("shop", "2026-01-01T00:00:00Z");
    await vane("import", jsonFile({ bundles: [first] }), "--data", data);
    const again = await vane("import", jsonFile({ bundles: [first] }), "--data", data);
    expect(again.code).toBe(0);
    expect(again.out).toContain("unchanged");
    const changed = bundleFor("shop", "2026-01-01T00:00:00Z");
    changed.parameters[0]!.default = "red";
    const run = await vane("import", jsonFile({ bundles: [changed] }), "--data", data);
    expect(run.code).toBe(1);
    expect(run.err).toContain("bundles[0].version: the stored bundle of shop/production has this version with other content");
    await inStore(data, async (stores) => expect((await stores.bundles.get("shop", "production"))?.bundle).toEqual(first));
  });

  it("replaces a stored key's fields but keeps when it was first stored", async () => {
    const data = tempDir();
    const key = secret("sk", "replace");
    await vane("import", jsonFile({ keys: [{ key, orgId: "org-1", scopes: ["sdk:read"] }] }), "--data", data);
    const before = await inStore(data, (stores) => stores.keys.byHash(sha256Hex(key)));
    const run = await vane("import", jsonFile({ keys: [{ key, orgId: "org-1", scopes: ["sdk:read", "sdk:write"], revoked: true }] }), "--data", data);
    expect(run.code).toBe(0);
    expect(run.out).toContain("replaced");
    const after = await inStore(data, (stores) => stores.keys.byHash(sha256Hex(key)));
    expect(after).toMatchObject({ scopes: ["sdk:read", "sdk:write"], createdAt: before!.createdAt });
    expect(after?.revokedAt).toBeDefined();
  });

  it("never brings back a key revoked or rotated since: a setup file imported again leaves both as they were", async () => {
    const data = tempDir();
    const leaked = secret("sk", "leaked");
    const old = secret("sk", "rotated");
    const file = jsonFile({ keys: [leaked, old].map((key) => ({ key, orgId: "org-1", projectId: "shop", scopes: ["sdk:read"], expiresAt: "2099-01-01T00:00:00Z" })) });
    expect((await vane("import", file, "--data", data)).code).toBe(0);
    expect((await vane("keys", "revoke", leaked, "--data", data)).code).toBe(0);
    expect((await vane("keys", "rotate", old, "--data", data)).code).toBe(0);
    const before = await inStore(data, async (stores) => ({ leaked: await stores.keys.byHash(sha256Hex(leaked)), old: await stores.keys.byHash(sha256Hex(old)) }));
    expect(before.old?.rotatedTo).toBeDefined();
    expect(Date.parse(before.old!.expiresAt!)).toBeLessThan(Date.parse("2099-01-01T00:00:00Z"));
    const again = await vane("import", file, "--data", data);
    expect(again.code).toBe(0);
    const after = await inStore(data, async (stores) => ({ leaked: await stores.keys.byHash(sha256Hex(leaked)), old: await stores.keys.byHash(sha256Hex(old)) }));
    expect(after.leaked?.revokedAt).toBe(before.leaked?.revokedAt);
    expect(after.old).toMatchObject({ rotatedTo: before.old!.rotatedTo, expiresAt: before.old!.expiresAt });
  });
});
