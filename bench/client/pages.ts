// The benchmark pages, each with its bundle inlined (as a page that bootstraps does) and the
// built client imported from /client/. One records when it first resolved; the other runs a
// timed loop of local resolves on request.
import { type ClientWorkload, SINK_FETCH_SOURCE } from "../scenarios/client.js";

/** JSON that is safe inside a <script>: no "</script>" or "<!--" can end it early. */
function inline(value: unknown): string {
  return JSON.stringify(value).replaceAll("<", "\\u003c");
}

function page(title: string, script: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title><link rel="icon" href="data:,">
<script type="module">
${script}
</script></head><body></body></html>`;
}

const clientOptions = `{ baseUrl: location.origin, apiKey: "vane_pk_bench", projectId: bundle.projectId, bootstrap: bundle, fetch: ${SINK_FETCH_SOURCE} }`;

/**
 * window.benchMarks: ms from navigation start to the script running (the SDK imported, as a page
 * that imports it statically gets it), the client ready, and the first resolve done.
 */
export function firstResolutionPage(workload: ClientWorkload): string {
  return page("first resolution", `import { createClient } from "/client/vane-client.js";
const sdkLoaded = performance.now();
const bundle = ${inline(workload.bundle)};
const client = await createClient(${clientOptions});
const clientReady = performance.now();
client.resolveLocal(${inline(workload.contexts[0])});
const firstResolve = performance.now();
window.benchMarks = { sdkLoaded, clientReady, firstResolve };`);
}

/** window.runThroughput(ms): resolves back to back (after a 500 ms warm-up); { resolves, elapsedMs }. */
export function throughputPage(workload: ClientWorkload): string {
  return page("throughput", `import { createClient } from "/client/vane-client.js";
const bundle = ${inline(workload.bundle)};
const contexts = ${inline(workload.contexts)};
const mask = contexts.length - 1;
const client = await createClient(${clientOptions});
let next = 0;
function loop(ms) {
  let resolves = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let k = 0; k < 100; k++) client.resolveLocal(contexts[next++ & mask]);
    resolves += 100;
    now = performance.now();
  }
  return { resolves, elapsedMs: now - start };
}
window.runThroughput = (ms) => { loop(500); return loop(ms); };`);
}
