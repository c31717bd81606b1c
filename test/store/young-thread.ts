// A thread for threads.test.ts: allocates like a batch load until V8 has grown its new space, then
// goes quiet and reports the new space's committed bytes once a second for 20 s.
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { parentPort } from "node:worker_threads";

// V8's memory reducer can shrink it too, some 8 s after a full collection, such as the one that
// loading this thread under tsx may run; the log writer under load ran none, and kept 8 MiB.
setFlagsFromString("--no-memory-reducer");
const newSpaceBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.physical_space_size;
let kept: object[] = [];
const loadEnds = Date.now() + 1_000;
while (Date.now() < loadEnds || newSpaceBytes() < 4 * 1024 * 1024) {
  for (let i = 0; i < 1_000; i++) {
    const row = { id: `r${i}`, body: [i, i + 1], headers: { n: i } };
    if (i % 50 === 0) kept.push(row); // some survive a scavenge, as a batch's rows do
  }
  if (kept.length > 2_000) kept = [];
}
kept = [];
for (let s = 0; s <= 20; s++) {
  parentPort!.postMessage(newSpaceBytes());
  await new Promise((resolve) => setTimeout(resolve, 1_000));
}
