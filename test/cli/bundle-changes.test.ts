// The CLI for everyday bundle changes (issue 19): validate without storing, put refusing an older
// version unless --rollback, history, diff, rollback, flags set, rollout, and init.
import { execFile, spawnSync } from "node:child_process";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join, resolve as resolvePath } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { compileBundle } from "../../src/bundle/compile.js";
import { resolve } from "../../src/bundle/resolve.js";
import type { Bundle } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import { bundleFor, inStore, jsonFile, tempDir, vane } from "./helpers.js";

const V1 = "2026-01-01T00:00:00Z";
const V2 = "2026-02-01T00:00:00Z";
const example = (name: string): Bundle => JSON.parse(readFileSync(new URL(`../../examples/bundles/${name}.json`, import.meta.url), "utf8")) as Bundle;
const stored = (data: string, project = "shop") => inStore(data, async (stores) => (await stores.bundles.get(project, "production"))?.bundle);

describe("vane bundles validate", () => {
  it("accepts a valid file and stores nothing", async () => {
    const data = tempDir();
    const run = await vane("bundles", "validate", jsonFile(example("ab-test")), "--data", data);
    expect(run).toMatchObject({ code: 0, err: "" });
    expect(run.out).toMatch(/a valid bundle for shop\/production \(org acme\), version 2026-11-25T09:00:00Z; nothing was stored$/);
    expect(existsSync(join(data, "vane.db"))).toBe(false);
  });

  it("refuses the typos of issue 19 with their paths and a did-you-mean", async () => {
    const bundle: any = example("ab-test");
    bundle.eventDefinition = [];
    bundle.layers[0].policies[1].shedule = { startAt: V1 };
    bundle.layers[0].policies[1].allocations[1].overide = bundle.layers[0].policies[1].allocations[1].overrides;
    delete bundle.layers[0].policies[1].allocations[1].overrides;
    bundle.eventDefinitions = [{ name: "signup", schema: { required: ["plan"] }, schemaEnforcement: "reject" }];
    const run = await vane("bundles", "validate", jsonFile(bundle), "--data", tempDir());
    expect(run.code).toBe(1);
    expect(run.err.split("\n").slice(1).sort()).toEqual(
      [
        '  eventDefinition: unknown field (did you mean "eventDefinitions"?)',
        "  eventDefinitions[0].schemaEnforcement: has no propertySchema to enforce",
        '  eventDefinitions[0].schema: unknown field (did you mean "propertySchema"?)',
        "  layers[0].policies[1].allocations[1].overrides: is required",
        '  layers[0].policies[1].allocations[1].overide: unknown field (did you mean "overrides"?)',
        "  layers[0].policies[1].shedule: unknown field",
      ].sort(),
    );
  });

  it("checks the version against the stored bundle when there is one", async () => {
    const data = tempDir();
    await vane("bundles", "put", jsonFile(bundleFor("shop", V2)), "--data", data);
    const run = await vane("bundles", "validate", jsonFile(bundleFor("shop", V1)), "--data", data);
    expect(run.code).toBe(1);
    expect(run.err).toContain(`version: ${V1} is not newer than the stored version ${V2} of shop/production`);
  });
});

describe("vane bundles put, history, diff, rollback", () => {
  it("refuses an older version without --rollback, and publishes it with", async () => {
    const data = tempDir();
    expect((await vane("bundles", "put", jsonFile(bundleFor("shop", V2)), "--data", data)).code).toBe(0);
    const older = await vane("bundles", "put", jsonFile(bundleFor("shop", V1)), "--data", data);
    expect(older.code).toBe(1);
    expect(older.err).toContain("nothing was written (1 problem)");
    expect(older.err).toContain("pass --rollback to publish an older one on purpose");
    expect((await stored(data))?.version).toBe(V2);
    const rollback = await vane("bundles", "put", jsonFile(bundleFor("shop", V1)), "--rollback", "--data", data);
    expect(rollback).toMatchObject({ code: 0, err: "" });
    expect((await stored(data))?.version).toBe(V1);
  });

  it("lists the history, diffs two versions, and rolls back to an earlier content as a new version", async () => {
    const data = tempDir();
    const first = bundleFor("shop", V1);
    const second = structuredClone(first);
    second.version = V2;
    second.parameters[0]!.default = "red";
    await vane("bundles", "put", jsonFile(first), "--data", data);
    await vane("bundles", "put", jsonFile(second), "--data", data);

    const history = await vane("bundles", "history", "--data", data);
    const rows = history.out.split("\n");
    expect(rows[1]).toMatch(new RegExp(`^\\* +${V2} +\\d{4}-.*org-1$`));
    expect(rows[2]).toMatch(new RegExp(`^ +${V1} +`));

    const diff = await vane("bundles", "diff", V1, V2, "--data", data);
    expect(diff.out).toBe(`~ version: "${V1}" → "${V2}"\n~ parameters[0].default: ${JSON.stringify(first.parameters[0]!.default)} → "red"`);
    const againstFile = await vane("bundles", "diff", "current", jsonFile(first), "--data", data);
    expect(againstFile.out).toContain('~ parameters[0].default: "red" →');

    const rolled = await vane("bundles", "rollback", V1, "--project", "shop", "--data", data);
    expect(rolled).toMatchObject({ code: 0, err: "" });
    const now = await stored(data);
    expect(now?.parameters[0]!.default).toBe(first.parameters[0]!.default);
    expect(Date.parse(now!.version)).toBeGreaterThan(Date.parse(V2));
    expect((await vane("bundles", "history", "--data", data)).out.split("\n")).toHaveLength(4);
    expect(await vane("bundles", "rollback", "2020-01-01T00:00:00Z", "--data", data)).toMatchObject({ code: 1 });
  });
});

describe("vane flags set and vane rollout", () => {
  it("serves a new default as a new version, read as the parameter's type", async () => {
    const data = tempDir();
    await vane("bundles", "put", jsonFile(example("ab-test")), "--data", data);
    const set = await vane("flags", "set", "checkout.freeShippingOver", "75", "--data", data);
    expect(set).toMatchObject({ code: 0, err: "" });
    expect(set.out).toContain("Note: running policies staff-preview, checkout-test still override checkout.freeShippingOver");
    const bundle = await stored(data);
    expect(bundle?.parameters[1]!.default).toBe(75);
    expect(Date.parse(bundle!.version)).toBeGreaterThan(Date.parse("2026-11-25T09:00:00Z"));
    expect(await vane("flags", "set", "checkout.freeShippingOver", "lots", "--data", data)).toMatchObject({
      code: 1,
      err: 'vane flags set: checkout.freeShippingOver is a number parameter: VALUE must be a number, got "lots"',
    });
    expect((await vane("flags", "set", "checkout.butonColor", "red", "--data", data)).err).toContain("(did you mean checkout.buttonColor?)");
  });

  it("moves a rollout's share so that resolution follows, and pauses it at 0", async () => {
    const data = tempDir();
    await vane("bundles", "put", jsonFile(example("rollout")), "--data", data);
    const engine = await loadEngine();
    const share = async () => {
      const compiled = compileBundle((await stored(data))!, engine);
      let v2 = 0;
      for (let i = 0; i < 2000; i++) if (resolve(compiled, { userId: `u-${i}` }).assignments["search.engine"] === "v2") v2++;
      return v2 / 2000;
    };
    expect(await share()).toBeCloseTo(0.2, 1);
    const run = await vane("rollout", "engine-rollout", "50", "--data", data);
    expect(run).toMatchObject({ code: 0, err: "" });
    expect(run.out).toContain("Rollout engine-rollout: 50% (buckets 0..499 of 1000).");
    expect(await share()).toBeCloseTo(0.5, 1);
    await vane("rollout", "engine-rollout", "0", "--data", data);
    expect((await stored(data))?.layers[0]!.policies[0]!.state).toBe("paused");
    expect(await share()).toBe(0);
    expect(await vane("rollout", "engine-rollout", "140", "--data", data)).toMatchObject({ code: 2 });
  });

  it("refuses to roll out an experiment with two allocations", async () => {
    const data = tempDir();
    await vane("bundles", "put", jsonFile(example("ab-test")), "--data", data);
    const run = await vane("rollout", "checkout-test", "30", "--data", data);
    expect(run.code).toBe(1);
    expect(run.err).toContain("checkout-test has 2 allocations");
  });
});

describe("vane init", () => {
  it("writes a bundle file, publishes it, and creates the project's keys", async () => {
    const data = tempDir();
    const file = join(tempDir(), "vane.bundle.json");
    const run = await vane("init", "--project", "web", "--org", "acme", "--file", file, "--data", data);
    expect(run.code).toBe(0);
    expect(run.err).toMatch(/^note: .* had no vane\.db, so this makes a new store there/);
    expect(run.out).toMatch(/publishable key {2}vane_pk_\w+/);
    expect(run.out).toMatch(/server-side key {2}vane_sk_\w+/);
    const written = JSON.parse(readFileSync(file, "utf8")) as Bundle;
    expect(await stored(data, "web")).toEqual(written);
    expect((await vane("bundles", "validate", file)).code).toBe(0);
    const keys = await inStore(data, (stores) => stores.keys.list());
    expect(keys.map((k) => [k.kind, k.orgId, k.projectId])).toEqual([["pk", "acme", "web"], ["sk", "acme", "web"]]);
    expect((await vane("init", "--project", "web", "--org", "acme", "--file", file, "--data", data)).code).toBe(1);
    expect((await vane("rollout", "new-feature-rollout", "10", "--data", data)).code).toBe(0);
  });

  it("writes a $schema that resolves from the file's folder, and prints next commands that run as printed", async () => {
    const data = tempDir();
    await vane("bundles", "put", jsonFile(bundleFor("shop", V1)), "--data", data); // a second project: the hints must name theirs
    const file = join(tempDir(), "vane.bundle.json");
    const run = await vane("init", "--project", "web", "--org", "acme", "--file", file, "--data", data);
    expect(run.code).toBe(0);
    const { $schema } = JSON.parse(readFileSync(file, "utf8")) as { $schema: string };
    expect(resolvePath(dirname(file), $schema)).toBe(fileURLToPath(new URL("../../schema/bundle.schema.json", import.meta.url)));
    const commands = run.out.split("\n").map((line) => line.trim()).filter((line) => line.startsWith("npx vane "));
    expect(commands).toHaveLength(3);
    // From a clone, as a user pastes them (npx runs the clone's own bin/vane.js).
    for (const command of commands) await promisify(execFile)("sh", ["-c", command], { cwd: fileURLToPath(new URL("../../", import.meta.url)) });
    const web = await inStore(data, async (stores) => (await stores.bundles.get("web", "production"))?.bundle);
    expect(web?.parameters[0]?.default).toBe(true);
    expect(web?.layers[0]?.policies[0]).toMatchObject({ state: "running" });
  });

  it("prints plain vane commands when it was run as vane from the PATH (the image, npm link)", () => {
    const bin = tempDir();
    symlinkSync(fileURLToPath(new URL("../../bin/vane.js", import.meta.url)), join(bin, "vane"));
    const dir = tempDir();
    const run = spawnSync("vane", ["init", "--data", "d"], { cwd: dir, encoding: "utf8", env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("\n  vane bundles validate vane.bundle.json --data d && vane bundles put vane.bundle.json --data d\n");
    expect(run.stdout).not.toContain("npx");
  });
});
