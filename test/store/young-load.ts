// For the young-generation tests: the new space's committed bytes, and a load that grows it.
import { getHeapSpaceStatistics } from "node:v8";

export const newSpaceBytes = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space")!.physical_space_size;

/** Allocates like requests for at least `ms`, until the new space is `minBytes`; keeps at most `keep` objects alive. */
export function loadYoungGeneration(ms: number, minBytes: number, keep: number): void {
  let kept: object[] = [];
  const loadEnds = Date.now() + ms;
  while (Date.now() < loadEnds || newSpaceBytes() < minBytes) {
    for (let i = 0; i < 1_000; i++) {
      const request = { id: `r${i}`, body: [i, i + 1], headers: { n: i } };
      if (i % 50 === 0) kept.push(request); // some survive a scavenge, as a request's objects do
    }
    if (kept.length > keep) kept = [];
  }
}
