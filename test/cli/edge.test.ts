// `vane edge dev` as a user runs it (node bin/vane.js, the built dist/): it serves the API from
// workerd on what --persist holds, and SIGTERM stops it with nothing left running. `vane edge init`
// writes wrangler.toml and the D1 migration, and overwrites neither.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startLocalEdge } from "../../src/edge/local.js";
import { BINDINGS, RETENTION_CRON } from "../../src/edge/wrangler-config.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import { D1_SCHEMA } from "../../src/store/edge/schema.js";
import { seedEdge } from "../edge/targets.js";
import { nodeSha256 } from "../server/harness.js";
import { bundleFor, tempDir, vane } from "./helpers.js";

const ROOT = new URL("../../", import.meta.url);
const started: ChildProcessWithoutNullStreams[] = [];
// SIGTERM, not SIGKILL: after a failed test the verb still stops its workerd, which a killed verb would leave running.
afterEach(async () => {
  const running = started.splice(0).filter((child) => child.exitCode === null && child.signalCode === null);
  await Promise.all(running.map((child) => new Promise((exited) => child.once("exit", exited).kill("SIGTERM"))));
});

/** The processes whose parent is `pid`, and theirs (workerd runs under miniflare's Node process). */
function descendants(pid: number): number[] {
  const children = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]!.split(" ")[1] === String(pid);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
  return children.flatMap((child) => [child, ...descendants(child)]);
}

async function edgeDev(persist: string, ...args: string[]): Promise<{ child: ChildProcessWithoutNullStreams; url: string; out: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ["bin/vane.js", "edge", "dev", "--port", "0", "--persist", persist, ...args], { cwd: ROOT });
  started.push(child);
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  await new Promise<void>((ready, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("Stop with Ctrl-C.")) ready();
    });
    void exited.then((code) => fail(new Error(`vane edge dev exited (${code}) before it was ready:\n${out}\n${err}`)));
  });
  return { child, exited, out, url: /is listening on (\S+)/.exec(out)![1]! };
}

describe("vane edge dev", () => {
  it("serves what --persist holds from workerd, and SIGTERM leaves nothing running", async () => {
    const persist = tempDir();
    const secret = generateKey("sk");
    const seeding = await startLocalEdge({ port: 0, host: "127.0.0.1", persistDir: persist });
    const stores = await seedEdge(seeding);
    await stores.bundles.put(bundleFor("shop", "2026-11-01T00:00:00Z"), new Date().toISOString());
    await stores.keys.put(toKeyRecord({ key: secret, orgId: "org-1", projectId: "shop", scopes: ["sdk:read"] }, nodeSha256, new Date().toISOString()));
    await seeding.close();

    const dev = await edgeDev(persist);
    expect((await fetch(`${dev.url}/health`)).status).toBe(200);
    const config = await fetch(`${dev.url}/v1/config/shop`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(config.status).toBe(200);
    expect(((await config.json()) as { version: string }).version).toBe("2026-11-01T00:00:00Z");
    const running = descendants(dev.child.pid!);
    expect(running.length).toBeGreaterThan(0); // workerd
    dev.child.kill("SIGTERM");
    expect(await dev.exited).toBe(0);
    expect(running.filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
    expect(existsSync(join(persist, "d1"))).toBe(true);
  });
  it("serves the console with --console, printing its URL, signed in with a console:read key", async () => {
    const persist = tempDir();
    const secret = generateKey("sk");
    const seeding = await startLocalEdge({ port: 0, host: "127.0.0.1", persistDir: persist });
    await (await seedEdge(seeding)).keys.put(toKeyRecord({ key: secret, orgId: "org-1", scopes: ["console:read"] }, nodeSha256, new Date().toISOString()));
    await seeding.close();

    const dev = await edgeDev(persist, "--console");
    expect(dev.out).toContain(`Console: ${dev.url}/console (sign in with the admin token or an API key with the console:read scope)`);
    const signIn = await fetch(`${dev.url}/console/session`, { method: "POST", headers: { Origin: dev.url, "Content-Type": "application/json" }, body: JSON.stringify({ token: secret }) });
    expect(signIn.status).toBe(200);
    expect(await signIn.json()).toMatchObject({ orgId: "org-1" });
    dev.child.kill("SIGTERM");
    expect(await dev.exited).toBe(0);
  });
});

describe("vane edge init", () => {
  it("writes wrangler.toml with every binding the Worker reads and the D1 schema as its first migration, once", async () => {
    const dir = tempDir();
    const run = await vane("edge", "init", "--dir", dir, "--name", "flags");
    expect(run.code).toBe(0);
    const toml = readFileSync(join(dir, "wrangler.toml"), "utf8");
    expect(toml).toContain('name = "flags"');
    expect(toml).toMatch(/main = ".*dist\/edge\/worker\.js"/);
    for (const binding of Object.values(BINDINGS)) expect(toml).toMatch(new RegExp(`(binding|name) = "${binding}"`));
    // Retention's Cron Trigger: the Worker's scheduled handler.
    expect(toml).toContain(`[triggers]\ncrons = ["${RETENTION_CRON}"]`);
    const migration = readFileSync(join(dir, "migrations/0001_vane.sql"), "utf8");
    for (const statement of D1_SCHEMA) expect(migration).toContain(statement);
    const again = await vane("edge", "init", "--dir", dir);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/wrangler\.toml exists; not overwritten/);
  });
});
