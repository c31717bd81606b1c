// The retention soak (issue 14): `vane serve` (the built dist/) with retention on takes a steady
// stream of event batches for SOAK_SECONDS (default 600); every 30 s it prints the database size
// (vane.db + WAL), the events and remembered ids held, and what was acknowledged. With retention
// the size must level off; bench/results/soak-latest.md records the table.
//
//   npm run bench:soak      (SOAK_SECONDS=60 for a short run; SOAK_RATE, SOAK_RETAIN_MINUTES)
import { statSync } from "node:fs";
import { join } from "node:path";
import { writeLatest } from "./report.js";
import { startVaneServe } from "./vane-serve.js";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE_PER_S = Number(process.env.SOAK_RATE ?? 300);
const EVENTS_PER_REQUEST = 4;
const RETAIN_MINUTES = Number(process.env.SOAK_RETAIN_MINUTES ?? 2);
const SAMPLE_MS = 30_000;

const days = RETAIN_MINUTES / (24 * 60);
const server = await startVaneServe({ args: ["--log-level", "warn", "--retain-days", String(days), "--dedup-hours", String(RETAIN_MINUTES / 60)] });
const { url, dataDir } = server;
const key = server.key("server-side key");

const size = (file: string) => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

let sent = 0;
let acknowledged = 0;
let refused = 0;
let sequence = 0;
const start = Date.now();
const rows: string[] = [];
const line = () => {
  const t = Math.round((Date.now() - start) / 1000);
  const events = server.count("SELECT coalesce(sum(count), 0) FROM event_log");
  const ids = server.count("SELECT count(*) FROM event_ids");
  const dbBytes = size(join(dataDir, "vane.db")) + size(join(dataDir, "vane.db-wal"));
  const row = `| ${t} | ${acknowledged.toLocaleString("en")} | ${refused} | ${mb(dbBytes)} | ${events.toLocaleString("en")} | ${ids.toLocaleString("en")} |`;
  rows.push(row);
  console.log(`soak ${t}s/${SECONDS}s: ${acknowledged} events acknowledged, ${shed} requests shed, db ${mb(dbBytes)} MB, ${events} events and ${ids} ids held`);
};

/** Requests in flight at most: past it a due request is shed (counted), so a server slower than the rate never makes the soak pile up sockets. */
const MAX_IN_FLIGHT = 256;
let inFlight = 0;
let shed = 0;

const post = async () => {
  sent++;
  if (inFlight >= MAX_IN_FLIGHT) {
    shed++;
    return;
  }
  inFlight++;
  const events = Array.from({ length: EVENTS_PER_REQUEST }, () => {
    const n = sequence++;
    return { id: `soak-${n}`, type: "track", unitKey: `u-${n % 5000}`, timestamp: new Date().toISOString(), event: "click", properties: { page: "/home", n } };
  });
  try {
    const response = await fetch(`${url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }) });
    if (response.status === 200) acknowledged += ((await response.json()) as { accepted: number }).accepted;
    else refused++;
  } catch {
    refused++;
  } finally {
    inFlight--;
  }
};

line();
const sampler = setInterval(line, SAMPLE_MS);
const tick = 100;
while (Date.now() - start < SECONDS * 1000) {
  const due = Math.floor(((Date.now() - start) / 1000) * RATE_PER_S) - sent;
  for (let i = 0; i < due; i++) void post();
  await new Promise((resolve) => setTimeout(resolve, tick));
}
clearInterval(sampler);
line();
await server.stop();

const report = [
  "# Retention soak",
  "",
  `\`node --import tsx bench/soak.ts\`: ${SECONDS} s of ${RATE_PER_S} requests/s × ${EVENTS_PER_REQUEST} events (each with an id) into \`vane serve --retain-days ${days.toFixed(5)} --dedup-hours ${(RETAIN_MINUTES / 60).toFixed(3)}\` (${RETAIN_MINUTES} minutes of both), retention every 60 s. ${new Date().toISOString().slice(0, 10)}, ${process.platform} ${process.arch}, Node ${process.versions.node}.`,
  "",
  "| seconds | events acknowledged | requests refused | vane.db + WAL, MB | events held | ids held |",
  "|---:|---:|---:|---:|---:|---:|",
  ...rows,
  "",
  `Requests shed by the soak itself (more than ${MAX_IN_FLIGHT} in flight): ${shed}.`,
  "",
].join("\n");
writeLatest("soak", report);
console.log(report);
