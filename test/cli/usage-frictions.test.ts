// Small refusals and conveniences of the CLI (issue 32): store options before the verb, a bundle
// from stdin, bad usage exiting 2, and clear words for a port taken twice or a --data that is a
// file.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { bundleFor, inStore, jsonFile, tempDir, vane } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const V1 = "2026-01-01T00:00:00Z";

/** A store holding two projects' bundles. */
async function twoProjects(): Promise<string> {
  const data = tempDir();
  await inStore(data, async (stores) => {
    await stores.bundles.put(bundleFor("shop", V1), V1);
    await stores.bundles.put(bundleFor("blog", V1), V1);
  });
  return data;
}

describe("store options before the verb", () => {
  it("vane --data DIR bundles validate FILE runs as with --data after the verb", async () => {
    const data = await twoProjects();
    const older = jsonFile(bundleFor("shop", "2025-01-01T00:00:00Z"));
    for (const argv of [["--data", data, "bundles", "validate", older], [`--data=${data}`, "bundles", "validate", older], ["bundles", "validate", older, "--data", data]]) {
      const run = await vane(...argv);
      expect(run.code).toBe(1);
      expect(run.err).toContain("is not newer than the stored version 2026-01-01T00:00:00Z of shop/production");
    }
    const list = await vane("--data", data, "bundles", "list");
    expect(list.code).toBe(0);
    expect(list.out).toContain("blog");
    expect(await vane("--data", data, "keys", "list", "--help")).toMatchObject({ code: 0, out: expect.stringMatching(/^Usage: vane keys list/) });
  });

  it("refuses another option before the verb, and a store option without its value, as usage errors", async () => {
    const early = await vane("--port", "8788", "serve");
    expect(early.code).toBe(2);
    expect(early.err).toMatch(/^vane: --port goes after the verb \(only --data, --store and --remote may come before it\)\n\nUsage: vane <verb>/);
    const bare = await vane("--data");
    expect(bare.code).toBe(2);
    expect(bare.err).toMatch(/^vane: --data needs a value/);
  });
});

describe("vane bundles put -", () => {
  it("reads the bundle from stdin", () => {
    const data = tempDir();
    const bundle = bundleFor("shop", V1);
    const run = spawnSync(process.execPath, ["bin/vane.js", "bundles", "put", "-", "--data", data], { cwd: ROOT, input: JSON.stringify(bundle), encoding: "utf8" });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Stored shop\/production \(org org-1\) version 2026-01-01T00:00:00Z in /);
    const bad = spawnSync(process.execPath, ["bin/vane.js", "bundles", "put", "-", "--data", data], { cwd: ROOT, input: "{ nope", encoding: "utf8" });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^vane bundles put: refused stdin, nothing was written \(1 problem\):\n {2}\(file\): stdin is not valid JSON/);
  });
});

describe("bad usage exits 2", () => {
  it.each([["bundles", "history"], ["bundles", "rollback", V1], ["rollout", "new-feature-rollout", "10"], ["flags", "set", "checkout.oneClick", "true"]])(
    "vane %s %s with two projects and no --project",
    async (...argv) => {
      const data = await twoProjects();
      const run = await vane(...argv, "--data", data);
      expect(run.code).toBe(2);
      expect(run.err).toMatch(/: the store holds 2 projects \((blog, shop|shop, blog)\); pass --project\n\nUsage: vane /);
    },
  );
});

describe("vane serve's ports and data folder", () => {
  let holder: Server | undefined;
  afterEach(() => holder?.close());

  it("refuses --metrics on the API's --port before listening", async () => {
    const run = await vane("serve", "--port", "8799", "--metrics", "8799", "--data", tempDir());
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/^vane serve: --metrics 8799 is the API's --port too: give \/metrics a port of its own, or --metrics on/);
  });

  it("names the option whose port another process holds", async () => {
    holder = createServer();
    const port = await new Promise<number>((ready) => holder!.listen(0, "127.0.0.1", () => ready((holder!.address() as { port: number }).port)));
    const run = await vane("serve", "--port", "0", "--metrics", String(port), "--data", tempDir());
    expect(run.code).toBe(1);
    expect(run.err).toBe(`vane serve: port ${port} on 127.0.0.1 is in use by another process (EADDRINUSE): stop it, or pass --metrics with another port (0 picks a free one)`);
  });

  it("refuses a --data that is a file, for serve and for the verbs, without a raw EEXIST", async () => {
    const file = join(tempDir(), "notes.txt");
    writeFileSync(file, "not a folder");
    for (const argv of [["serve", "--port", "0"], ["keys", "list"], ["bundles", "put", jsonFile(bundleFor("shop", V1))], ["import", jsonFile({ bundles: [] })]]) {
      const inside = argv[0] === "import" ? join(file, "data") : file;
      const run = await vane(...argv, "--data", inside);
      expect(run.code).toBe(1);
      expect(run.err).toBe(`vane ${argv[0] === "keys" || argv[0] === "bundles" ? `${argv[0]} ${argv[1]}` : argv[0]}: --data ${inside}: ${file} is a file, not a folder; pass the folder that holds (or is to hold) vane.db`);
    }
  });
});
