// A stand-in for the Parquet copy's thread (stop-mid-copy-halt-child.ts) that is inside a DuckDB
// call on libuv's pool when it is halted, and reads no halt: it counts its DuckDB as the copy
// does (columnar/duck.ts), opens it, reports "idle" (the halt may come), runs one statement of
// ~1 s as a counted call, then idles with DuckDB open until it is terminated.
import { parentPort, workerData } from "node:worker_threads";
import { countOpenDucksIn, inDuckCall, openDuck } from "../../src/store/columnar/duck.js";
import { CALLS_SLOT, DUCKS_SLOT } from "../../src/store/parquet/parquet-protocol.js";

countOpenDucksIn(new Int32Array((workerData as { readonly halt: SharedArrayBuffer }).halt), DUCKS_SLOT, CALLS_SLOT);
const duck = await openDuck({ threads: 1 });
await inDuckCall(async () => {
  const statement = duck.connection.run("SELECT sum(i * i) FROM range(30000000) t(i)");
  parentPort!.postMessage({ type: "idle" });
  await statement;
});
setInterval(() => undefined, 60_000);
