// The Worker under load, as a child process of bench/edge.bench.ts (which pins it, and so the
// workerd it starts, to a core with taskset): the built dist/edge/ in workerd through the built
// local runner (`vane edge dev`'s), in memory, seeded like the bench's `vane serve` (the bench bundle and one
// server-side key). Prints one JSON line, {"url","key","pid","projectId","bundleVersion"}, where
// pid is workerd's: the process that answers and whose CPU a request costs. Stops on SIGTERM/SIGINT.
//
//   node --import tsx bench/http/serve-edge.ts [--port 0] [--host 127.0.0.1]
import { parseArgs } from "node:util";
import type * as Local from "../../src/edge/local.js";
import { childrenNamed } from "../harness/proc-stats.js";
import { seedBench } from "../scenarios/seed.js";

const { values } = parseArgs({ options: { port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" } } });
// The built runner, as `vane edge dev` runs it (npm run build:ts and build:edge first).
const { startLocalEdge } = (await import(new URL("../../dist/edge/local.js", import.meta.url).href)) as typeof Local;

const edge = await startLocalEdge({ port: Number(values.port), host: values.host });
const { key, projectId, version } = await seedBench(await edge.stores());
const [workerd] = childrenNamed(process.pid, "workerd");
if (workerd === undefined) throw new Error("serve-edge: no workerd process under this one");
process.stdout.write(`${JSON.stringify({ url: edge.url, key, pid: workerd, projectId, bundleVersion: version })}\n`);

const stop = (): void => void edge.close().then(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
