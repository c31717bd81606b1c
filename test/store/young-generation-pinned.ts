// A process for young-generation.test.ts, started with --min-semi-space-size: a load grows the new
// space, which V8 then may not shrink; shrinkIdleYoungGeneration looks every 100 ms while it is
// idle for 2 s. Prints the scavenges that ran while idle.
import { PerformanceObserver, constants } from "node:perf_hooks";
import { shrinkIdleYoungGeneration } from "../../src/store/young-generation.js";
import { loadYoungGeneration } from "./young-load.js";

loadYoungGeneration(500, 8 * 1024 * 1024, 50_000);
let scavenges = 0;
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if ((entry as unknown as { detail: { kind: number } }).detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
});
observer.observe({ entryTypes: ["gc"] });
const stop = shrinkIdleYoungGeneration(100);
await new Promise((resolve) => setTimeout(resolve, 2_000));
stop();
observer.disconnect();
process.stdout.write(`${scavenges}\n`);
