// A thread for threads.test.ts: allocates like a batch load until V8 has grown its new space, then
// goes quiet and reports the new space's committed bytes once a second for 20 s.
import { setFlagsFromString } from "node:v8";
import { parentPort } from "node:worker_threads";
import { loadYoungGeneration, newSpaceBytes } from "./young-load.js";

// V8's memory reducer can shrink it too, some 8 s after a full collection, such as the one that
// loading this thread under tsx may run; the log writer under load ran none, and kept 8 MiB.
setFlagsFromString("--no-memory-reducer");
loadYoungGeneration(1_000, 4 * 1024 * 1024, 2_000);
for (let s = 0; s <= 20; s++) {
  parentPort!.postMessage(newSpaceBytes());
  await new Promise((resolve) => setTimeout(resolve, 1_000));
}
