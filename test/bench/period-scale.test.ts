// Real pace in bench:instructions (bench/instructions/pace.ts): the slowdown's arithmetic, and a
// server started with its periods scaled (`--bench-period-scale`, NodeServerOptions.periodScale)
// that runs its learner at the scaled period, not the shipped one.
import { afterEach, describe, expect, it } from "vitest";
import { MAX_SCALE, longestPeriodMs, periodScaleArgs, slowdown } from "../../bench/instructions/pace.js";
import { DEFAULT_LEARN_MS, type RunningServer, startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { makeBatch, tempDirs } from "../store/fixtures.js";
import { vane } from "../cli/helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the slowdown S", () => {
  it("is the native rate over the counted window's", () => {
    // 5,000 requests/s natively, 1,000 in 8 s counted (125/s): 40× slower.
    expect(slowdown({ requests: 10_000, ms: 2_000 }, { requests: 1_000, ms: 8_000 })).toBe(40);
  });

  it("is 1 at least and MAX_SCALE at most, and refuses a rate it cannot compute", () => {
    expect(slowdown({ requests: 100, ms: 1_000 }, { requests: 200, ms: 1_000 })).toBe(1);
    expect(slowdown({ requests: 1e9, ms: 1 }, { requests: 1, ms: 1_000 })).toBe(MAX_SCALE);
    expect(() => slowdown({ requests: 100, ms: 1_000 }, { requests: 0, ms: 1_000 })).toThrow(/no slowdown/);
  });

  it("scales the serve's periods, and the bench's waits by the longest (the copy's gap, the share, the learner's batch: 1 s)", () => {
    expect(periodScaleArgs(37.46)).toEqual(["--bench-period-scale", "37.5"]);
    expect(longestPeriodMs(1)).toBe(1_000);
    expect(longestPeriodMs(40)).toBe(40_000);
  });
});

describe("a server started with its periods scaled", () => {
  const tempDir = tempDirs("vane-period-scale-");

  it("is a benchmark setting: `vane serve --bench-period-scale` takes 1 to MAX_SCALE, and its usage does not offer it", async () => {
    for (const value of ["0.5", "1001", "fast", ""]) {
      const run = await vane("serve", "--bench-period-scale", value, "--data", tempDir());
      expect(run.code).toBe(2);
      expect(run.err).toContain(`--bench-period-scale must be a number from 1 to ${MAX_SCALE}, got "${value}"`);
      expect(run.err).toContain("Usage: vane serve");
      expect(run.err).not.toMatch(/^\s+--bench-period-scale/m);
    }
  });

  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** The learner's lag over /metrics, `ms` after another connection stored 10 events (its look at the store finds them). */
  async function lagAfter(periodScale: number, ms: number): Promise<number> {
    const dataDir = tempDir();
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, metrics: "on", periodScale });
    const other = openSqliteStores({ dataDir });
    await other.events.append(makeBatch("other", 10));
    await other.close();
    await sleep(ms);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return Number(/^vane_learner_lag_events (\S+)$/m.exec(text)?.[1]);
  }

  // The learner's first run comes one period after the start and looks at the store: 200 ms at
  // real pace, 5 s with the periods × 25.
  const WAIT_MS = 2_500;
  it(`learns within ${WAIT_MS} ms at real pace`, async () => {
    expect(await lagAfter(1, WAIT_MS)).toBe(0);
  }, 30_000);

  it(`does not learn within ${WAIT_MS} ms with its periods × 25 (a learner period of ${(DEFAULT_LEARN_MS * 25) / 1000} s)`, async () => {
    expect(await lagAfter(25, WAIT_MS)).toBe(10);
  }, 30_000);
});
