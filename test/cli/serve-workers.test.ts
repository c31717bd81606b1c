// `vane serve --workers N` as a user runs it (the built dist/): the workers share one port and
// one store, a killed worker is replaced while the others go on, and SIGTERM drains them all.
// Which process answered comes from the request log lines (--log-level info --log-requests all), which carry its pid.
import { readFileSync, readdirSync } from "node:fs";
import { type ClientRequest, get } from "node:http";
import { availableParallelism } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { workersOption } from "../../src/cli/serve-cluster.js";
import { inStore, tempDir, vane } from "./helpers.js";
import { type ServeProcess, serveProcess } from "./serve-process.js";
import { loggedEvents } from "../store/logged-events.js";
import { waitFor } from "../wait.js";

const WRITERS = 8;
const PER_BATCH = 20;

/** Every worker a test saw, killed after it should one outlive its primary. */
const seen = new Set<number>();
afterEach(() => {
  for (const pid of seen) if (alive(pid)) process.kill(pid, "SIGKILL");
  seen.clear();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes whose parent is `pid`, from /proc (Linux). */
function childPids(pid: number): number[] {
  const children = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
  children.forEach((child) => seen.add(child));
  return children;
}

/** Pids of the processes that logged a request (to `path` when given). */
function answeredBy(served: ServeProcess, path?: string): Set<number> {
  const pids = new Set<number>();
  for (const line of served.stdout().split("\n").slice(0, -1)) {
    if (!line.startsWith("{")) continue;
    const entry = JSON.parse(line) as { msg?: string; pid: number; path?: string };
    if (entry.msg === "request" && (path === undefined || entry.path === path)) pids.add(entry.pid);
  }
  return pids;
}

// A connection the primary was handing to a worker as it was killed is never answered (Node's
// cluster keeps its copy open): the clients here give up, as real ones do.
const CLIENT_TIMEOUT_MS = 5_000;

/** GET on a connection of its own, so the primary hands it to the next worker in turn. */
function freshGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, timeout: CLIENT_TIMEOUT_MS }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode!));
    })
      .on("timeout", function (this: ClientRequest) {
        this.destroy(new Error("timed out"));
      })
      .on("error", reject);
  });
}

interface Load {
  /** Ids of the events in batches answered 200. */
  readonly acked: string[];
  /** The status of every request that got an answer. */
  readonly statuses: number[];
  stop(): Promise<void>;
}

/** WRITERS clients sending event batches until stopped; a request that fails is not acknowledged. */
function sendEvents(url: string, key: string, prefix: string): Load {
  const acked: string[] = [];
  const statuses: number[] = [];
  let stopped = false;
  const writer = async (w: number) => {
    for (let n = 0; !stopped; n++) {
      const events = Array.from({ length: PER_BATCH }, (_, i) => ({ id: `${prefix}-w${w}-b${n}-e${i}`, type: "track", unitKey: `u${w}`, timestamp: "2026-11-21T12:00:00Z", event: "click" }));
      try {
        const response = await fetch(`${url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }), signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS) });
        statuses.push(response.status);
        const body = (await response.json()) as { accepted: number };
        if (response.status === 200 && body.accepted === PER_BATCH) acked.push(...events.map((e) => e.id));
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20)); // reset or refused: not acknowledged
      }
    }
  };
  const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
  return {
    acked,
    statuses,
    async stop() {
      stopped = true;
      await Promise.all(writers);
    },
  };
}

async function storedIds(dataDir: string): Promise<string[]> {
  return inStore(dataDir, async (stores) => (await loggedEvents(stores.events).list({ type: "track", limit: 1_000_000 })).map((e) => e.event.clientId!));
}

async function stopAndCheck(served: ServeProcess): Promise<void> {
  const workers = childPids(served.child.pid!);
  served.child.kill("SIGTERM");
  expect(await served.exited).toEqual({ code: 0, signal: null });
  for (const pid of workers) expect(alive(pid)).toBe(false);
}

describe("vane serve --workers", () => {
  it("answers on one port from two worker processes, and stores batches sent through both exactly once", async () => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--workers", "2", "--log-level", "info", "--log-requests", "all"]);
    const primary = served.child.pid!;
    const workers = childPids(primary);
    expect(workers).toHaveLength(2);
    for (let i = 0; i < 10; i++) expect(await freshGet(`${served.url}/health`)).toBe(200);
    await waitFor(() => answeredBy(served, "/health").size === 2, "both workers to log /health");
    expect([...answeredBy(served, "/health")].sort()).toEqual([...workers].sort());

    const load = sendEvents(served.url, served.pk, "both");
    await waitFor(() => load.acked.length >= 100 * PER_BATCH, "100 acknowledged batches");
    await load.stop();
    expect(new Set(load.statuses)).toEqual(new Set([200]));
    await waitFor(() => answeredBy(served, "/v1/events/batch").size === 2, "both workers to log batches");
    await stopAndCheck(served);
    const ids = await storedIds(dataDir);
    expect(ids.length).toBe(load.acked.length);
    expect(new Set(ids)).toEqual(new Set(load.acked));
  });

  it("replaces a worker killed with SIGKILL; the primary and the other worker go on, nothing acknowledged is lost", async () => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--workers", "2", "--log-level", "info", "--log-requests", "all"]);
    const primary = served.child.pid!;
    const [victim, survivor] = childPids(primary);
    const load = sendEvents(served.url, served.pk, "kill");
    await waitFor(() => load.acked.length >= 20 * PER_BATCH, "20 acknowledged batches");
    process.kill(victim!, "SIGKILL");
    await waitFor(() => served.stderr().includes(`worker ${victim} was killed by SIGKILL`), "the restart to be logged");
    await waitFor(() => childPids(primary).filter((pid) => pid !== victim).length === 2, "a replacement worker");
    const replacement = childPids(primary).find((pid) => pid !== victim && pid !== survivor)!;
    await waitFor(async () => (await freshGet(`${served.url}/health`).catch(() => 0)) === 200 && answeredBy(served).has(replacement), "the replacement to answer");
    const ackedAtRestart = load.acked.length;
    await waitFor(() => load.acked.length >= ackedAtRestart + 20 * PER_BATCH, "20 more acknowledged batches");
    await load.stop();
    expect(served.child.exitCode).toBeNull();
    await stopAndCheck(served);
    const ids = await storedIds(dataDir);
    expect(new Set(ids).size).toBe(ids.length);
    const stored = new Set(ids);
    for (const id of load.acked) expect(stored.has(id)).toBe(true);
  });

  // With 1 too: busy keep-alive connections once held a closing server open for ever.
  it.each(["2", "1"])("drains on SIGTERM under load (--workers %s): every answered request was a 200 and is stored; exit 0, no worker remains", async (count) => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--workers", count]);
    const workers = childPids(served.child.pid!);
    const load = sendEvents(served.url, served.pk, "drain");
    await waitFor(() => load.acked.length >= 50 * PER_BATCH, "50 acknowledged batches");
    served.child.kill("SIGTERM");
    expect(await served.exited).toEqual({ code: 0, signal: null });
    await load.stop();
    for (const pid of workers) expect(alive(pid)).toBe(false);
    expect(new Set(load.statuses)).toEqual(new Set([200]));
    const stored = new Set(await storedIds(dataDir));
    for (const id of load.acked) expect(stored.has(id)).toBe(true);
    expect(served.stderr()).toContain("vane serve: stopped");
  });

  it("runs in one process with --workers 1 (the default)", async () => {
    const served = await serveProcess(tempDir());
    expect(childPids(served.child.pid!)).toEqual([]);
    await stopAndCheck(served);
  });

  it("takes auto as one worker per core", () => {
    expect(workersOption("auto", "")).toBe(availableParallelism());
  });

  it.each(["0", "abc", "1.5", "257", ""])("refuses --workers %j as a usage error", async (workers) => {
    const run = await vane("serve", "--workers", workers, "--data", tempDir());
    expect(run.code).toBe(2);
    expect(run.err).toContain("--workers must be auto or an integer from 1 to 256");
  });
});
