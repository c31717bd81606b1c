// The weights churn soak (issue 32): how many config polls a learning policy turns from 304s into
// full 200 downloads. Two `vane serve` (the built dist/) run side by side on the demo project for
// SOAK_SECONDS (default 180): one with the bounds on publishing learned weights as they ship
// (--weights-threshold 0.05, at most every 10 minutes), one as before them (any move of 0.01, no
// interval). Each takes the same traffic: decisions on the demo's Thompson policy with clicks
// (one arm better), and SOAK_CLIENTS clients revalidating /v1/config/demo with If-None-Match
// every SOAK_POLL_S seconds (60 by default: the config's max-age, which the SDK follows).
// bench/results/weights-soak-latest.md records the table.
//
//   npm run bench:weights-soak      (SOAK_SECONDS=60 for a short run; SOAK_CLIENTS, SOAK_POLL_S)
import { writeLatest } from "./report.js";
import { startVaneServe } from "./vane-serve.js";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 100);
const POLL_S = Number(process.env.SOAK_POLL_S ?? 60);
const DECISIONS_PER_BATCH = 10;
const BATCH_EVERY_MS = 500;
// Arms close together, as real ones often are: Thompson stays unsure for a long time, and its weights keep moving.
const CLICK_RATE: Record<string, number> = { popular: 0.1, personal: 0.11, trending: 0.105 };

interface Setup {
  readonly name: string;
  readonly args: readonly string[];
}

const SETUPS: readonly Setup[] = [
  { name: "bounded (defaults: 0.05, 10 min)", args: [] },
  { name: "unbounded (0.01, no interval)", args: ["--weights-threshold", "0.01", "--weights-min-minutes", "0"] },
];

interface Tally {
  revalidations: number;
  notModified: number;
  failed: number;
}

const post = (url: string, key: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });

/** Decisions and the clicks they earn, until `end`. */
async function learnLoop(server: { url: string; sk: string }, end: number): Promise<void> {
  for (let batch = 0; Date.now() < end; batch++) {
    const decisions = Array.from({ length: DECISIONS_PER_BATCH }, (_, i) => ({ policyId: "recs-strategy", context: { userId: `u-${batch}-${i}` } }));
    const answer = await post(`${server.url}/v1/decide/batch`, server.sk, { decisions }).catch(() => undefined);
    if (answer?.status === 200) {
      const { results } = (await answer.json()) as { results: { decisionId: string; allocationKey: string }[] };
      const events = results
        .filter((r) => Math.random() < (CLICK_RATE[r.allocationKey] ?? 0))
        .map((r) => ({ type: "track", event: "click", unitKey: "u", decisionId: r.decisionId, timestamp: new Date().toISOString() }));
      if (events.length > 0) await post(`${server.url}/v1/events/batch`, server.sk, { events }).catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, BATCH_EVERY_MS));
  }
}

/** One client: a first download, then a revalidation every POLL_S seconds, from `offsetMs` on. */
async function pollLoop(server: { url: string; pk: string }, offsetMs: number, end: number, tally: Tally): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, offsetMs));
  let etag: string | null = null;
  while (Date.now() < end) {
    const headers: Record<string, string> = { Authorization: `Bearer ${server.pk}` };
    if (etag !== null) headers["If-None-Match"] = etag;
    try {
      const answer = await fetch(`${server.url}/v1/config/demo`, { headers });
      await answer.arrayBuffer();
      if (etag !== null) {
        tally.revalidations++;
        if (answer.status === 304) tally.notModified++;
        else if (answer.status !== 200) tally.failed++;
      }
      if (answer.status === 200) etag = answer.headers.get("ETag");
    } catch {
      tally.failed++;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_S * 1000));
  }
}

async function run(setup: Setup): Promise<string> {
  const server = await startVaneServe({ args: ["--log-level", "warn", ...setup.args] });
  const end = Date.now() + SECONDS * 1000;
  const tally: Tally = { revalidations: 0, notModified: 0, failed: 0 };
  const stagger = (POLL_S * 1000) / CLIENTS;
  const clients = { url: server.url, pk: server.key("publishable key"), sk: server.key("server-side key") };
  await Promise.all([learnLoop(clients, end), ...Array.from({ length: CLIENTS }, (_, i) => pollLoop(clients, i * stagger, end, tally))]);
  const publications = server.count("SELECT count(*) FROM bundle_history WHERE published_by = 'learner'");
  await server.stop();
  const share = tally.revalidations === 0 ? 0 : (100 * tally.notModified) / tally.revalidations;
  return `| ${setup.name} | ${publications} | ${tally.revalidations} | ${tally.notModified} | ${share.toFixed(1)} % | ${tally.failed} |`;
}

const rows = await Promise.all(SETUPS.map(run));
const report = [
  "# Weights churn soak",
  "",
  `\`node --import tsx bench/weights-soak.ts\`: ${SECONDS} s, two \`vane serve\` side by side (--weights-every 60), each with ${(1000 / BATCH_EVERY_MS) * DECISIONS_PER_BATCH} decisions/s on the demo's Thompson policy (click rates ${JSON.stringify(CLICK_RATE)}) and ${CLIENTS} clients revalidating /v1/config/demo every ${POLL_S} s. ${new Date().toISOString().slice(0, 10)}, ${process.platform} ${process.arch}, Node ${process.versions.node}.`,
  "",
  "| publishing | learner publications | revalidations | 304 | 304 share | failed |",
  "|---|---:|---:|---:|---:|---:|",
  ...rows,
  "",
].join("\n");
writeLatest("weights-soak", report);
console.log(report);
