// The client in Node: local resolves per second (tinybench, the built dist/client file, bundle
// bootstrapped), and the time from process start to the first resolution in a fresh process.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Row, measure } from "../harness/measure.js";
import { type FirstResolution, summarize } from "./first-resolution.js";
import { type ClientWorkload, SINK_FETCH_SOURCE } from "../scenarios/client.js";

interface LocalClient {
  resolveLocal(context: Record<string, unknown>): unknown;
  close(): Promise<void>;
}
type CreateClient = (options: Record<string, unknown>) => Promise<LocalClient>;

const NOW_MS = Date.parse("2026-11-21T12:00:00.000Z");

export async function nodeThroughput(clientFile: string, workloads: readonly ClientWorkload[]): Promise<Row[]> {
  const { createClient } = (await import(pathToFileURL(clientFile).href)) as { createClient: CreateClient };
  const sink = new Function(`return ${SINK_FETCH_SOURCE}`)() as typeof fetch;
  const clients = await Promise.all(
    workloads.map((w) => createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "vane_pk_bench", projectId: w.bundle.projectId, bootstrap: w.bundle, fetch: sink, now: () => NOW_MS })),
  );
  const rows = measure(
    workloads.map((w, i) => {
      const client = clients[i]!;
      const mask = w.contexts.length - 1;
      let next = 0;
      return { key: `node-${w.key}`, name: `Node, ${w.name}`, callsPerSample: 100, run: (count: number) => { for (let k = 0; k < count; k++) client.resolveLocal(w.contexts[next++ & mask]!); } };
    }),
    { timeMs: 3000, warmupMs: 1000 },
  );
  await Promise.all(clients.map((c) => c.close()));
  return rows;
}

/** Fresh `node` processes: import the client, create it from the bundle, resolve once. */
export function nodeFirstResolution(clientFile: string, workload: ClientWorkload, runs: number): FirstResolution {
  const dir = mkdtempSync(join(tmpdir(), "vane-bench-client-"));
  const script = join(dir, "first.mjs");
  writeFileSync(script, coldStartScript(clientFile, workload));
  try {
    const samples = Array.from({ length: runs }, () => JSON.parse(execFileSync(process.execPath, [script], { encoding: "utf8" })) as Record<string, number>);
    return summarize(`node-${workload.key}`, `Node, ${workload.name}`, samples);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** performance.now() in Node counts from process start, as it counts from navigation in a page. */
function coldStartScript(clientFile: string, workload: ClientWorkload): string {
  return `import { createClient } from ${JSON.stringify(pathToFileURL(clientFile).href)};
const sdkLoaded = performance.now();
const bundle = ${JSON.stringify(workload.bundle)};
const client = await createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "vane_pk_bench", projectId: bundle.projectId, bootstrap: bundle, fetch: ${SINK_FETCH_SOURCE} });
const clientReady = performance.now();
client.resolveLocal(${JSON.stringify(workload.contexts[0])});
const firstResolve = performance.now();
console.log(JSON.stringify({ sdkLoaded, clientReady, firstResolve }));
await client.close();
`;
}
