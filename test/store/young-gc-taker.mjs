// A thread for young-generation.test.ts: takes V8's gc the way collector() does (the flag on, a
// context, the flag off) again and again, as the store threads do when they start, until told to stop.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parentPort, workerData } from "node:worker_threads";

const stop = new Int32Array(workerData);
parentPort.postMessage("taking");
while (Atomics.load(stop, 0) === 0) {
  setFlagsFromString("--expose-gc");
  runInNewContext("typeof gc");
  setFlagsFromString("--no-expose-gc");
}
