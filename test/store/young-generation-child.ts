// A process for young-generation.test.ts: allocates like a load until V8 has grown the new space,
// then goes quiet, with shrinkIdleYoungGeneration looking every second, and prints the new space's
// committed bytes once a second until it is small or 30 s have passed.
import { shrinkIdleYoungGeneration } from "../../src/store/young-generation.js";
import { loadYoungGeneration, newSpaceBytes } from "./young-load.js";

loadYoungGeneration(2_000, 16 * 1024 * 1024, 50_000);
const stop = shrinkIdleYoungGeneration(1_000);
process.stdout.write(`${newSpaceBytes()}\n`);
for (let s = 0; s < 30 && newSpaceBytes() > 2 * 1024 * 1024; s++) {
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  process.stdout.write(`${newSpaceBytes()}\n`);
}
stop();
