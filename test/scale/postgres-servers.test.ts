// Two real `vane serve --store postgres://…` processes on one private PostgreSQL database, each
// with its own --data folder, as servers behind a load balancer run (issue 16's bar): both answer
// alike; what the CLI writes reaches both within 3 s; and 8 writers sending event batches to both
// while one is killed with SIGKILL lose nothing acknowledged and store nothing twice.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { Client } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import { bundleFor, secret, tempDir } from "../cli/helpers.js";
import { type ServeProcess, serveProcess } from "../cli/serve-process.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { parquetRows } from "../store/parquet-files.js";
import { loggedEvents } from "../store/logged-events.js";
import { waitFor } from "../wait.js";

const ROOT = new URL("../../", import.meta.url);
const run = promisify(execFile);
const PROJECT = "shop";
const ORG = "org-1";
const SK = secret("sk", "postgres-servers");
const PK = secret("pk", "postgres-servers");
/** No request of these tests may hang: each is abandoned (and the test fails) after this. */
const REQUEST_TIMEOUT_MS = 10_000;
const USERS = Array.from({ length: 40 }, (_, i) => `user-${i}`);

let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.stop();
});

/** `node bin/vane.js …` as an operator runs it; fails on a non-zero exit. */
async function cli(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ["bin/vane.js", ...args], { cwd: ROOT, timeout: 30_000 });
  return stdout;
}

function jsonFile(value: unknown): string {
  const file = join(tempDir(), "input.json");
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

function keyEntry(key: string) {
  return { key, orgId: ORG, projectId: PROJECT, scopes: ["sdk:read", "sdk:write"] };
}

/** A fresh database holding the keys and bundle, imported through the CLI. */
async function seededStore(extraKeys: readonly string[] = []): Promise<string> {
  const url = await pg.createDatabase();
  const keys = [SK, PK, ...extraKeys];
  const file = jsonFile({ keys: keys.map(keyEntry), bundles: [bundleFor(PROJECT, "2026-12-01T00:00:00Z")] });
  expect(await cli("import", file, "--store", url)).toContain(`Imported ${keys.length} keys and 1 bundle`);
  return url;
}

async function twoServers(url: string): Promise<[ServeProcess, ServeProcess]> {
  return Promise.all([serveProcess(tempDir(), ["--store", url]), serveProcess(tempDir(), ["--store", url])]);
}

async function request(server: ServeProcess, path: string, options: { key: string; body?: unknown }): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: options.body === undefined ? "GET" : "POST",
    headers: { Authorization: `Bearer ${options.key}`, "Content-Type": "application/json" },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
}

async function config(server: ServeProcess, key = PK): Promise<{ status: number; etag: string | null }> {
  const response = await request(server, `/v1/config/${PROJECT}`, { key });
  await response.body?.cancel();
  return { status: response.status, etag: response.headers.get("ETag") };
}

async function assignments(server: ServeProcess): Promise<unknown[]> {
  return Promise.all(
    USERS.map(async (userId) => {
      const response = await request(server, "/v1/resolve", { key: SK, body: { context: { userId, country: "US" } } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { assignments: unknown }).assignments;
    }),
  );
}

/** Polls `check` on every server until all pass. How soon is the bar (3 s), a figure for a quiet machine, not for a test. */
async function seenByAll(servers: readonly ServeProcess[], what: string, check: (server: ServeProcess) => Promise<boolean>): Promise<void> {
  const pending = new Set(servers);
  await waitFor(async () => {
    for (const server of [...pending]) if (await check(server)) pending.delete(server);
    return pending.size === 0;
  }, `${what} seen by every server`, { everyMs: 50 });
}

describe("two vane serve processes on one PostgreSQL database", () => {
  it("serve the same ETag and the same assignments", async () => {
    const servers = await twoServers(await seededStore());
    const [a, b] = await Promise.all([config(servers[0]), config(servers[1])]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.etag).toMatch(/\S/);
    expect(b.etag).toBe(a.etag);
    const [fromA, fromB] = await Promise.all([assignments(servers[0]), assignments(servers[1])]);
    expect(fromB).toEqual(fromA);
    // The users fall into different arms: equal answers are not one answer repeated.
    expect(new Set(fromA.map((x) => JSON.stringify(x))).size).toBeGreaterThan(1);
  }, 60_000);

  it("see a bundle put and a key revoked through the CLI, both of them", async () => {
    const doomed = secret("sk", "postgres-servers-doomed");
    const url = await seededStore([doomed]);
    const servers = await twoServers(url);
    const before = await Promise.all(servers.map((s) => config(s)));
    expect(before.map((c) => c.status)).toEqual([200, 200]);
    // The key works on both (and sits in both key caches) before it is revoked.
    for (const server of servers) expect((await config(server, doomed)).status).toBe(200);

    const next: Bundle = bundleFor(PROJECT, "2026-12-02T00:00:00Z");
    next.parameters = next.parameters.map((p) => (p.key === "checkout.buttonColor" ? { ...p, default: "red" } : p));
    await cli("bundles", "put", jsonFile(next), "--store", url);
    await seenByAll(servers, "the new bundle", async (server) => {
      const now = await config(server);
      return now.status === 200 && now.etag !== before[0]!.etag;
    });
    const after = await Promise.all(servers.map((s) => config(s)));
    expect(after[1]!.etag).toBe(after[0]!.etag);
    const resolved = await request(servers[1], "/v1/resolve", { key: SK, body: { context: { userId: "user-1" }, parameters: ["checkout.buttonColor"] } });
    expect(((await resolved.json()) as { assignments: Record<string, unknown> }).assignments["checkout.buttonColor"]).toMatch(/^(red|green)$/);

    await cli("keys", "revoke", doomed, "--store", url);
    await seenByAll(servers, "the revocation", async (server) => (await config(server, doomed)).status === 401);
    // Only that key: the others still work on both.
    for (const server of servers) expect((await config(server)).status).toBe(200);
  }, 150_000);

  it("lose no acknowledged batch and store none twice when one is killed with SIGKILL under 8 writers", async () => {
    const url = await seededStore();
    const dataDirs = [tempDir(), tempDir()];
    // One Parquet folder for both (a shared volume): each event lands in exactly one file.
    const shared = tempDir();
    const serveArgs = ["--store", url, "--parquet", join(shared, "parquet")];
    const servers = await Promise.all(dataDirs.map((dir) => serveProcess(dir, serveArgs)));
    const acked: string[][] = [];
    const sent = new Set<string>();
    let ackedAfterKill = 0;
    let duplicates = 0;
    let movedBatches = 0;
    let killed = false;
    let stop = false;
    const failures: string[] = [];

    /** Sends one batch until a server acknowledges it, moving to the other server on a lost connection or a 503. */
    const deliver = async (ids: string[], first: number): Promise<void> => {
      const body = { events: ids.map((id) => ({ id, type: "track", event: "click", unitKey: id.split("-")[0]!, timestamp: new Date().toISOString() })) };
      for (let attempt = 0, target = first; attempt < 200; attempt++, target = 1 - target) {
        let response: Response;
        try {
          response = await request(servers[target]!, "/v1/events/batch", { key: SK, body });
        } catch (error) {
          if ((error as Error).name === "TimeoutError") failures.push(`a batch hung on server ${target}`);
          if (attempt === 0) movedBatches++;
          await sleep(20);
          continue; // the connection was lost (the killed server): the other one
        }
        if (response.status === 503) {
          await response.body?.cancel();
          if (attempt === 0) movedBatches++;
          await sleep(20);
          continue;
        }
        const answer = (await response.json()) as { accepted: number; duplicates: number };
        if (response.status !== 200 || answer.accepted + answer.duplicates !== ids.length) failures.push(`status ${response.status}: ${JSON.stringify(answer)}`);
        acked.push(ids);
        duplicates += answer.duplicates;
        if (killed) ackedAfterKill++;
        return;
      }
      failures.push(`batch ${ids[0]} never acknowledged`);
    };
    const writer = async (w: number) => {
      for (let n = 0; !stop; n++) {
        const ids = Array.from({ length: 20 }, (_, i) => `w${w}-b${n}-e${i}`);
        ids.forEach((id) => sent.add(id));
        await deliver(ids, (w + n) % 2);
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    while (acked.length < 40 && failures.length === 0) await sleep(5);
    // The victim is the server copying to Parquet (the lease's holder names its pid): its lease must pass on.
    let holderPid: number | undefined;
    await waitFor(async () => (holderPid = await leaseHolderPid(url, "parquet")) !== undefined, "a holder of the Parquet copy's lease", { everyMs: 50 });
    const victimIndex = servers.findIndex((server) => server.child.pid === holderPid);
    expect(victimIndex).toBeGreaterThanOrEqual(0);
    const [victim, survivor] = [servers[victimIndex]!, servers[1 - victimIndex]!];
    killed = true;
    victim.child.kill("SIGKILL");
    expect((await victim.exited).signal).toBe("SIGKILL");
    while (ackedAfterKill < 40 && failures.length === 0) await sleep(5);
    stop = true;
    await Promise.all(writers);
    expect(failures).toEqual([]);

    // The killed server comes back on its folder and the same database, and serves at once.
    const restarted = await serveProcess(dataDirs[victimIndex]!, serveArgs);
    const health = await (await fetch(`${restarted.url}/health`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })).json();
    expect(health).toMatchObject({ status: "ok" });
    expect((await config(restarted)).etag).toBe((await config(survivor)).etag);
    const extra = ["restart-e0", "restart-e1"];
    extra.forEach((id) => sent.add(id));
    servers[victimIndex] = restarted;
    await deliver(extra, victimIndex);

    const stores = await openPostgresStores({ url });
    let stored: string[];
    try {
      stored = (await loggedEvents(stores.events).list({ type: "track", limit: 1_000_000 })).map((e) => e.event.clientId!);
    } finally {
      await stores.close();
    }
    const storedSet = new Set(stored);
    expect(stored.length).toBe(storedSet.size); // none twice
    const missing = acked.flat().filter((id) => !storedSet.has(id));
    expect(missing).toEqual([]); // every acknowledged batch whole
    expect(stored.filter((id) => !sent.has(id))).toEqual([]); // nothing nobody sent
    expect(storedSet.size).toBe(acked.flat().length); // every batch sent was acknowledged in the end
    expect(acked.length).toBeGreaterThanOrEqual(81);
    expect(duplicates + movedBatches).toBeGreaterThan(0); // the kill landed among writes

    // The Parquet copy ran under a lease on one server, then another, its holder killed between
    // files and checkpoints: the shared folder ends with every stored track event once.
    const copied = async () => (await parquetRows(shared)).filter((row) => row.type === "track").map((row) => String(row.seq));
    await waitFor(async () => (await copied()).length >= stored.length, "every stored track event in the shared Parquet folder", { everyMs: 250 });
    const rows = await copied();
    expect(rows.length).toBe(stored.length);
    expect(new Set(rows).size).toBe(rows.length);
  }, 180_000);

  it("outlive PostgreSQL killed under load, and answer 200 again once it is back", async () => {
    // A PostgreSQL of its own: the other tests' server stays up.
    const own = await startPostgres();
    try {
      const url = await own.createDatabase();
      const file = jsonFile({ keys: [SK, PK].map(keyEntry), bundles: [bundleFor(PROJECT, "2026-12-01T00:00:00Z")] });
      await cli("import", file, "--store", url);
      const servers = await twoServers(url);
      let stop = false;
      let sent = 0;
      const writer = async (w: number) => {
        for (let n = 0; !stop; n++) {
          const events = Array.from({ length: 5 }, (_, i) => ({ id: `o${w}-${n}-${i}`, type: "track", event: "click", unitKey: "u", timestamp: new Date().toISOString() }));
          sent++;
          await request(servers[(w + n) % 2]!, "/v1/events/batch", { key: SK, body: { events } }).then((r) => r.body?.cancel(), () => sleep(20));
          await request(servers[(w + n + 1) % 2]!, "/v1/resolve", { key: SK, body: { context: { userId: `u${n}` } } }).then((r) => r.body?.cancel(), () => sleep(20));
        }
      };
      const writers = Array.from({ length: 8 }, (_, w) => writer(w));
      // Each step lasts while the writers make a round more each (8 writers, 2 requests a round).
      const rounds = async (what: string) => {
        const from = sent;
        await waitFor(() => sent >= from + 16, what, { everyMs: 10 });
      };
      while (sent < 200) await sleep(10);
      await own.kill();
      await rounds("the writers' load while PostgreSQL is down");
      await own.restart();
      await rounds("the writers' load while PostgreSQL comes back");
      stop = true;
      await Promise.all(writers);
      for (const server of servers) expect({ exit: server.child.exitCode, signal: server.child.signalCode }).toEqual({ exit: null, signal: null });
      // Back to work: each server stores a batch again (a functional deadline, not a speed figure).
      for (const [i, server] of servers.entries()) {
        const events = [{ id: `back-${i}`, type: "track", event: "click", unitKey: "u", timestamp: new Date().toISOString() }];
        const stored = () => request(server, "/v1/events/batch", { key: SK, body: { events } }).then((r) => (void r.body?.cancel(), r.status === 200), () => false);
        await waitFor(stored, `server ${i} storing a batch again`, { everyMs: 200 });
      }
    } finally {
      await own.stop();
    }
  }, 180_000);
});

/** The pid of the server holding a lease (holders are `host:pid:nonce`), undefined while nobody does. */
async function leaseHolderPid(url: string, name: string): Promise<number | undefined> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ holder: string }>("SELECT holder FROM leases WHERE name = $1 AND expires_at > now()", [name]);
    const pid = rows[0]?.holder.split(":")[1];
    return pid === undefined ? undefined : Number(pid);
  } finally {
    await client.end();
  }
}
