// A process for heap-growth.test.ts: calls boundHeapGrowth(), then allocates enough to make V8
// run full collections, each of which (under --trace-gc-verbose) prints the factor it grew by.
import { boundHeapGrowth } from "../../src/server/heap-growth.js";

boundHeapGrowth();
const live: number[][] = [];
for (let i = 0; i < 10; i++) live.push(Array.from({ length: 1 << 17 }, (_, k) => k + 0.5 + i));
let garbage: string[][] = [];
for (let round = 0; round < 300; round++) {
  garbage.push(new Array(100_000).fill(round).map(String));
  if (garbage.length > 4) garbage = [];
}
process.stdout.write(`${live.length + garbage.length}\n`);
