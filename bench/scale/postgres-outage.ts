// PostgreSQL killed for 10 s under load (issue 16, for docs/deploy.md): two `vane serve --store
// postgres://…` processes (the built dist/) on one PostgreSQL with fsync on take a steady load of
// config GETs, resolves and event batches with ids; PostgreSQL is killed with SIGKILL, kept down
// OUTAGE_SECONDS, restarted, and the load goes on AFTER_SECONDS more. Per second it records what
// clients got from each endpoint, the p99 latency, stale bundles served and hung requests (no
// answer within the client's timeout); at the end every acknowledged event id must be stored
// exactly once. bench/results/postgres-outage-latest.md records it.
//
//   npm run bench:outage        (OUTAGE_RATE=2 doubles the load)
import { execFile } from "node:child_process";
import { createWriteStream, mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import { startPostgres } from "../../test/services/postgres.js";
import { OutageLoad } from "./outage-load.js";
import { type Timeline, outcomeText, progressLine, recovery, secondRows, table } from "./outage-report.js";
import { writeLatest } from "../harness/report.js";
import { type VaneServe, startVaneServe } from "../harness/vane-serve.js";
import { loggedEvents } from "../../test/store/logged-events.js";

const STEADY_MS = 10_000;
const OUTAGE_MS = Number(process.env.OUTAGE_SECONDS ?? 10) * 1000;
const AFTER_MS = Number(process.env.AFTER_SECONDS ?? 20) * 1000;
const SCALE = Number(process.env.OUTAGE_RATE ?? 1);
const RATES = { config: 120 * SCALE, resolve: 80 * SCALE, events: 50 * SCALE };
const EVENTS_PER_BATCH = 10;
const CLIENT_TIMEOUT_MS = 5_000;
const RETRY_AFTER_MS = 1_000;
/** After the load stops, how long batches not yet acknowledged keep being resent. */
const DRAIN_MS = 30_000;
const ROOT = new URL("../../", import.meta.url);
const PROJECT = "shop";
const SK = "vane_sk_outagebenchoutagebenchoutagebench01";
const PK = "vane_pk_outagebenchoutagebenchoutagebench01";

const work = mkdtempSync(join(tmpdir(), "vane-outage-"));
const pg = await startPostgres({ fsync: true });
const running: VaneServe[] = [];
// Ctrl-C stops what the bench started (the servers and PostgreSQL would outlive it), at once: the
// servers killed, not drained, since thousands of requests may be in flight while PostgreSQL is down.
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    interrupted = true;
    console.error(`\n${signal}: stopping the servers and PostgreSQL`);
    void Promise.allSettled([...running.map((server) => server.kill()), pg.stop()]).finally(() => process.exit(130));
  });
}

/** A server's output goes to <work>/<name>.log: PostgreSQL's outage makes it long. */
async function serve(name: string, storeUrl: string): Promise<string> {
  const log = createWriteStream(join(work, `${name}.log`));
  const server = await startVaneServe({ dataDir: join(work, name), args: ["--log-level", "warn", "--store", storeUrl], onLine: (line) => log.write(`${line}\n`) });
  running.push(server);
  return server.url;
}

async function seed(storeUrl: string): Promise<void> {
  const shop = { ...demoBundle("2026-12-01T00:00:00Z"), orgId: "org-1", projectId: PROJECT };
  const keys = [SK, PK].map((key) => ({ key, orgId: "org-1", projectId: PROJECT, scopes: ["sdk:read", "sdk:write"] }));
  const file = join(work, "import.json");
  writeFileSync(file, JSON.stringify({ keys, bundles: [shop] }));
  await promisify(execFile)(process.execPath, ["bin/vane.js", "import", file, "--store", storeUrl], { cwd: ROOT });
}

async function storedIds(storeUrl: string): Promise<string[]> {
  const stores = await openPostgresStores({ url: storeUrl });
  try {
    return (await loggedEvents(stores.events).list({ type: "track", limit: 10_000_000 })).map((e) => e.event.clientId ?? "");
  } finally {
    await stores.close();
  }
}

try {
  const storeUrl = await pg.createDatabase();
  await seed(storeUrl);
  const servers = [await serve("a", storeUrl), await serve("b", storeUrl)];
  const total = RATES.config + RATES.resolve + RATES.events;
  console.log(`two servers on PostgreSQL (fsync on): ${servers.join(", ")}; load ${total} req/s (config ${RATES.config}, resolve ${RATES.resolve}, events ${RATES.events} × ${EVENTS_PER_BATCH}); ${cpus().length} cores shared by PostgreSQL, both servers and this client`);
  const load = new OutageLoad({ servers, project: PROJECT, key: SK, rates: RATES, eventsPerBatch: EVENTS_PER_BATCH, clientTimeoutMs: CLIENT_TIMEOUT_MS, retryAfterMs: RETRY_AFTER_MS });
  const timeline = { killMs: Number.POSITIVE_INFINITY, restartMs: Number.POSITIVE_INFINITY, readyMs: Number.POSITIVE_INFINITY, endMs: 0 };
  let printed = 0;
  const progress = setInterval(() => {
    const upTo = Math.floor(load.now() / 1000);
    for (const row of secondRows(load.samples, { ...timeline, endMs: upTo * 1000 }).slice(printed)) console.log(`${progressLine(row)}  in flight ${load.pending}`);
    printed = upTo;
  }, 1000);
  const running = load.run(DRAIN_MS);

  await sleep(STEADY_MS);
  timeline.killMs = load.now();
  await pg.kill();
  console.log(`--- PostgreSQL killed (SIGKILL) at ${(timeline.killMs / 1000).toFixed(1)} s`);
  await sleep(OUTAGE_MS);
  timeline.restartMs = load.now();
  if (interrupted) await new Promise(() => undefined); // the signal's handler exits
  await pg.restart();
  timeline.readyMs = load.now();
  console.log(`--- PostgreSQL restarted at ${(timeline.restartMs / 1000).toFixed(1)} s, accepting connections at ${(timeline.readyMs / 1000).toFixed(1)} s`);
  await sleep(AFTER_MS);
  timeline.endMs = load.now();
  load.stop();
  await running;
  clearInterval(progress);
  const drainedMs = load.now() - timeline.endMs;

  const stored = await storedIds(storeUrl);
  const storedOnce = new Set(stored);
  const acked = new Set(load.acknowledged);
  const missing = [...acked].filter((id) => !storedOnce.has(id)).length;
  const unsent = stored.filter((id) => !load.sent.has(id)).length;
  const twice = stored.length - storedOnce.size;
  const fine: Timeline = timeline;
  const rows = secondRows(load.samples, fine);
  const r = recovery(load.samples, fine);
  const verdict = missing === 0 && twice === 0 && unsent === 0 ? "PASS" : "FAIL";

  const secs = (ms: number | undefined) => (ms === undefined ? "—" : `${(ms / 1000).toFixed(1)} s`);
  const summary = [
    `- Load: ${total} req/s (config ${RATES.config}, resolve ${RATES.resolve}, event batches ${RATES.events} of ${EVENTS_PER_BATCH}), open loop, spread evenly over both servers; client timeout ${CLIENT_TIMEOUT_MS / 1000} s; an event batch not acknowledged is resent with the same ids ${RETRY_AFTER_MS / 1000} s later.`,
    `- PostgreSQL killed with SIGKILL at ${secs(fine.killMs)}, restarted at ${secs(fine.restartMs)}, accepting connections at ${secs(fine.readyMs)} (crash recovery with fsync on took ${secs(fine.readyMs - fine.restartMs)}).`,
    `- During the outage, config: ${outcomeText(r.duringOutage.config)}; stale bundle header (\`X-Service-Bundle-Stale: true\`) on ${r.staleDuringOutage} answers.`,
    `- During the outage, resolve: ${outcomeText(r.duringOutage.resolve)}; events: ${outcomeText(r.duringOutage.events)}.`,
    `- First answer that was not 200/304 after the kill: config ${secs(r.firstFailureAfterKillMs.config)}, resolve ${secs(r.firstFailureAfterKillMs.resolve)}, events ${secs(r.firstFailureAfterKillMs.events)}.`,
    `- Recovery: last answer that was not 200/304, counted from PostgreSQL accepting connections: config ${secs(r.lastFailureAfterReadyMs.config)}, resolve ${secs(r.lastFailureAfterReadyMs.resolve)}, events ${secs(r.lastFailureAfterReadyMs.events)}.`,
    `- Hung requests (no answer within ${CLIENT_TIMEOUT_MS / 1000} s): ${r.hung}. Slowest answer: config ${r.maxLatencyMs.config.toFixed(0)} ms, resolve ${r.maxLatencyMs.resolve.toFixed(0)} ms, events ${r.maxLatencyMs.events.toFixed(0)} ms.`,
    `- Events: ${load.sent.size} sent, ${acked.size} acknowledged (${load.resends} batch resends; the last acknowledged ${secs(drainedMs)} after the load stopped; ${load.unacknowledgedBatches} batches never acknowledged), ${stored.length} stored; acknowledged but not stored: ${missing}; stored twice: ${twice}; stored but never sent: ${unsent}; reported as duplicates on a resend: ${load.duplicates}. **${verdict}**`,
  ];
  const report = [
    "# PostgreSQL killed for 10 s under load",
    "",
    `\`npm run bench:outage\` (bench/scale/postgres-outage.ts), ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} cores shared by PostgreSQL (fsync on), both servers and the load client.`,
    "",
    "## Summary",
    "",
    ...summary,
    "",
    "## Per second (by when each request was sent)",
    "",
    "Counts by outcome: an HTTP status, `timeout` (no answer within the client's timeout) or `network` (the connection failed). `stale`: answers with `X-Service-Bundle-Stale: true`.",
    "",
    ...table(rows),
    "",
  ].join("\n");
  const [written] = writeLatest("postgres-outage", report);
  console.log(["", ...summary, "", `written to ${written}; server logs in ${work}`].join("\n"));
  process.exitCode = verdict === "PASS" ? 0 : 1;
} finally {
  await Promise.all(running.map((server) => server.stop()));
  await pg.stop();
}
