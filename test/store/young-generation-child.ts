// A process for young-generation.test.ts: allocates like a load until V8 has grown the new space,
// then goes quiet, with shrinkIdleYoungGeneration looking every second, and prints the new space's
// committed bytes once a second until it is small or 30 s have passed.
import { getHeapSpaceStatistics } from "node:v8";
import { shrinkIdleYoungGeneration } from "../../src/store/young-generation.js";

const newSpaceBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.physical_space_size;
let kept: object[] = [];
const loadEnds = Date.now() + 2_000;
while (Date.now() < loadEnds || newSpaceBytes() < 16 * 1024 * 1024) {
  for (let i = 0; i < 1_000; i++) {
    const request = { id: `r${i}`, body: [i, i + 1], headers: { n: i } };
    if (i % 50 === 0) kept.push(request); // some survive a scavenge, as a request's objects do
  }
  if (kept.length > 50_000) kept = [];
}
kept = [];
const stop = shrinkIdleYoungGeneration(1_000);
process.stdout.write(`${newSpaceBytes()}\n`);
for (let s = 0; s < 30 && newSpaceBytes() > 2 * 1024 * 1024; s++) {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  process.stdout.write(`${newSpaceBytes()}\n`);
}
stop();
