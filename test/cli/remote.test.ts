// The CLI's --remote (issue 28 item 4): every verb that reads or writes the store does the same
// work through a real `vane serve --admin-token`'s admin API as on a data folder: same output,
// same exit codes, same refusals (another organization's project included); a store set up
// entirely through --remote then answers /v1 with the keys it made. A refused token, an
// unreachable server or one without an admin API is one line, no stack.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { inStore, jsonFile, secret, tempDir, vane, type Run } from "./helpers.js";
import { serveProcess } from "./serve-process.js";

const TOKEN = "remote-admin-token-for-tests-0123456789";
const OLD = "2026-01-01T00:00:00Z";
const NEW = "2026-12-01T00:00:00Z";
const IMPORTED = secret("sk", "remote-imported");
const example = (name: string): Bundle => JSON.parse(readFileSync(new URL(`../../examples/bundles/${name}.json`, import.meta.url), "utf8")) as Bundle;
/** Times that are part of the scenario; any other is "now" and differs from run to run. */
const NEVER = "2020-01-01T00:00:00Z";
const FIXED_TIMES = new Set([OLD, NEW, NEVER, example("ab-test").version, "2099-01-01T00:00:00Z"]);

afterEach(() => {
  vi.unstubAllEnvs();
});

const shop = example("ab-test");
const search = { ...example("rollout"), projectId: "search" };
const FILES = {
  import: jsonFile({ keys: [{ key: IMPORTED, orgId: "acme", projectId: "shop", scopes: ["sdk:read", "sdk:write"] }], bundles: [shop] }),
  crossingImport: jsonFile({ keys: [{ key: secret("sk", "crossing"), orgId: "other", projectId: "shop", scopes: ["sdk:read"] }] }),
  newer: jsonFile({ ...shop, version: NEW }),
  older: jsonFile({ ...shop, version: OLD }),
  intruder: jsonFile({ ...shop, orgId: "other", env: "staging", version: NEW }),
  broken: jsonFile({ ...shop, version: "2026-12-02T00:00:00Z", hashing: { unitKey: "userId", bucketCount: 0 } }),
  search: jsonFile(search),
};

/** The same verbs in the same order: every one that reads or writes the store, refusals included. */
const SCENARIO: readonly (readonly string[])[] = [
  ["import", FILES.import],
  ["import", FILES.crossingImport],
  ["bundles", "put", FILES.newer],
  ["bundles", "put", FILES.older],
  ["bundles", "put", FILES.older, "--rollback"],
  ["bundles", "put", FILES.newer],
  ["bundles", "put", FILES.intruder],
  ["bundles", "put", FILES.broken],
  ["bundles", "put", FILES.search],
  ["bundles", "validate", FILES.older],
  ["bundles", "get", "shop"],
  ["bundles", "get", "nowhere"],
  ["bundles", "history", "--project", "shop"],
  ["bundles", "diff", OLD, "current", "--project", "shop"],
  ["flags", "set", "checkout.freeShippingOver", "75", "--project", "shop"],
  ["flags", "set", "checkout.freeShippingOver", "lots", "--project", "shop"],
  ["bundles", "rollback", NEW, "--project", "shop"],
  ["bundles", "rollback", NEVER, "--project", "shop"],
  ["rollout", "engine-rollout", "50", "--project", "search"],
  ["keys", "create", "--org", "acme", "--project", "shop", "--scopes", "sdk:read,sdk:write"],
  ["keys", "create", "--org", "other", "--project", "shop", "--scopes", "sdk:read"],
  ["keys", "create", "--org", "acme", "--scopes", "sdk:read", "--kind", "pk", "--expires", "2099-01-01T00:00:00Z"],
  ["keys", "create", "--org", "acme", "--scopes", "admin", "--kind", "pk"],
  ["keys", "rotate", IMPORTED],
  ["keys", "rotate", IMPORTED],
  ["keys", "revoke", IMPORTED],
  ["keys", "revoke", IMPORTED],
  ["keys", "revoke", "key_0000000000000000"],
  ["keys", "revoke", secret("sk", "never-stored")],
  ["keys", "list"],
  ["bundles", "list"],
  ["events", "count"],
  ["events", "count", "--type", "click"],
  ["events", "list", "--project", "shop"],
  ["events", "discovered"],
];

/** What differs between two correct runs: where the store is, new secrets and ids, the time now, column widths. */
function normalized(run: Run, store: string): Run {
  const clean = (text: string) =>
    text
      .split("\n")
      .filter((line) => !line.includes("demo")) // the demo project `vane serve` seeds on its first start
      .join("\n")
      .replaceAll(store, "<store>")
      .replace(/vane_(pk|sk|mk|ak)_[A-Za-z0-9_-]{32,}/g, "<secret>")
      .replace(/key_[0-9a-f]{16}/g, "<id>")
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, (time) => (FIXED_TIMES.has(time) ? time : "<now>"))
      .replace(/ {2,}/g, "  ");
  return { code: run.code, out: clean(run.out), err: clean(run.err) };
}

async function scenario(where: readonly string[], store: string): Promise<Run[]> {
  const runs: Run[] = [];
  for (const argv of SCENARIO) runs.push(normalized(await vane(...argv, ...where), store));
  return runs;
}

async function post(url: string, key: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

describe("vane … --remote", () => {
  it("does what the same verbs do on a data folder, and the store it sets up answers /v1", async () => {
    vi.stubEnv("VANE_ADMIN_TOKEN", TOKEN);
    const server = await serveProcess(tempDir(), ["--admin-token", TOKEN]);
    const data = tempDir();
    await inStore(data, async () => undefined); // a server's folder, which holds vane.db, as the remote server's does
    const local = await scenario(["--data", data], data);
    const remote = await scenario(["--remote", server.url], server.url);
    SCENARIO.forEach((argv, i) => expect({ argv, ...remote[i] }).toEqual({ argv, ...local[i] }));
    // The scenario is what it claims: writes stored, refusals refused.
    expect(local.map((run) => run.code)).toEqual([0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 2, 0, 1, 0, 0, 1, 1, 0, 0, 0, 2, 0, 0]);
    expect(local[20]!.err).toBe("vane keys create: refused: --project project shop belongs to organization acme (the store), not other");
    expect(local[6]!.err).toBe("vane bundles put: project shop belongs to organization acme; a bundle of another organization cannot name it");

    const created = await vane("keys", "create", "--org", "acme", "--project", "shop", "--scopes", "sdk:read,sdk:write", "--remote", server.url);
    const sk = /^ {2}(vane_sk_\S+)$/m.exec(created.out)![1]!;
    const resolved = await post(`${server.url}/v1/resolve`, sk, { context: { userId: "u-1" } });
    expect(resolved.status).toBe(200);
    expect(resolved.body.assignments["checkout.freeShippingOver"]).toBe(shop.parameters[1]!.default);
    expect((await post(`${server.url}/v1/resolve`, IMPORTED, { context: { userId: "u-1" } })).body.error.message).toBe("API key has been revoked");
  });

  it("reads the server's events as the same verbs read its data folder", async () => {
    vi.stubEnv("VANE_ADMIN_TOKEN", TOKEN);
    const dataDir = tempDir();
    const server = await serveProcess(dataDir, ["--admin-token", TOKEN]);
    await vane("import", FILES.import, "--remote", server.url);
    const now = new Date().toISOString();
    const events = [
      { type: "track", unitKey: "u-1", timestamp: now, event: "purchase", value: 10 },
      { type: "track", unitKey: "u-2", timestamp: now, event: "mystery-click" },
    ];
    expect((await post(`${server.url}/v1/events/batch`, IMPORTED, { events })).status).toBe(200);
    for (const argv of [["events", "count"], ["events", "count", "--project", "shop", "--type", "track"], ["events", "list"], ["events", "list", "--limit", "1"], ["events", "discovered"]]) {
      const remote = await vane(...argv, "--remote", server.url);
      const local = await vane(...argv, "--data", dataDir);
      expect(remote.code).toBe(0);
      expect({ argv, ...remote, out: remote.out.replaceAll(server.url, "<store>") }).toEqual({ argv, ...local, out: local.out.replaceAll(dataDir, "<store>") });
    }
    expect((await vane("events", "count", "--remote", server.url)).out).toBe("2");
  });

  it("refuses a missing or wrong token, an unreachable server and one without an admin API in one line", async () => {
    const server = await serveProcess(tempDir());
    const oneLine = (run: Run, message: string) => {
      expect(run).toEqual({ code: 1, out: "", err: message });
    };
    vi.stubEnv("VANE_ADMIN_TOKEN", "");
    oneLine(await vane("keys", "list", "--remote", server.url), "vane keys list: --remote needs the server's admin token in the VANE_ADMIN_TOKEN environment variable");
    vi.stubEnv("VANE_ADMIN_TOKEN", TOKEN);
    oneLine(await vane("bundles", "list", "--remote", server.url), `vane bundles list: ${server.url} has no admin API: start the server with --admin-token (or VANE_ADMIN_TOKEN)`);
    const admin = await serveProcess(tempDir(), ["--admin-token", TOKEN]);
    vi.stubEnv("VANE_ADMIN_TOKEN", `${TOKEN}x`);
    oneLine(await vane("events", "count", "--remote", admin.url), `vane events count: the admin API at ${admin.url} refused the token in VANE_ADMIN_TOKEN: Invalid admin token`);
    oneLine(await vane("import", FILES.import, "--remote", admin.url), `vane import: the admin API at ${admin.url} refused the token in VANE_ADMIN_TOKEN: Invalid admin token`);
    admin.child.kill("SIGTERM");
    await admin.exited;
    oneLine(await vane("keys", "list", "--remote", admin.url), `vane keys list: cannot reach the admin API at ${admin.url}: ECONNREFUSED`);
    oneLine(await vane("keys", "list", "--remote", "ftp://example.com"), "vane keys list: --remote must be an http:// or https:// URL, got ftp://…");
    oneLine(await vane("keys", "list", "--remote", server.url, "--store", "postgres://x@localhost/db"), "vane keys list: --remote and --store name two stores: pass one");
  });
});
