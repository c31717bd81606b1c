// `vane results` with issue 30's further statistics on a real SQLite store: CUPED (--pre-period),
// confidence sequences (--sequential), the Bayesian view (--engine bayesian), adjusted p-values
// (--correction), ratio metrics (--metric A/B) and winsorizing (--cap), each figure as computed
// from the simulated units without the store; the refusals of bad options.
import { describe, expect, it } from "vitest";
import { compare, type Summary } from "../../src/analysis/results/compare.js";
import { adjustPValues } from "../../src/analysis/results/corrections.js";
import type { CovariateSums } from "../../src/analysis/results/cuped.js";
import { ratioSummary } from "../../src/analysis/results/ratio.js";
import { bayesianFigures, cupedFigures, sequentialFigures } from "../../src/analysis/results/views.js";
import type { Policy } from "../../src/bundle/types.js";
import type { StoredEvent } from "../../src/store/types.js";
import { START_MS, exposure, iso, staticPolicy, track } from "../analysis/results/experiment.js";
import { seeded } from "../analysis/simulate.js";
import { vane } from "./helpers.js";
import { storeWith } from "./results-store.js";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const POLICY = staticPolicy("pol-cuped", "cuped-exp", [{ key: "control", buckets: 500 }, { key: "treatment", buckets: 500 }]);

interface Unit {
  allocationKey: string;
  /** Pre-period value (7 days before exposure; 0 without events) and whether it had an event. */
  x: number;
  before: boolean;
  y: number;
  bought: boolean;
  viewed: boolean;
}

/**
 * 500 units per arm exposed from day 10; 70% bought 2 days before exposure (value x), every tenth
 * also 10 days before (outside a 7-day pre-period: must not count); after exposure, 60% buy with
 * value 10 + 0.8x + noise (+3 in treatment), 90% view.
 */
function experiment(): { events: StoredEvent[]; units: Unit[] } {
  const random = seeded(30);
  const events: StoredEvent[] = [];
  const units: Unit[] = [];
  for (const allocationKey of ["control", "treatment"]) {
    for (let i = 0; i < 500; i++) {
      const unit = `${allocationKey}-${i}`;
      const at = START_MS + 10 * DAY_MS + Math.floor(random() * 48 * 60) * 60_000;
      const before = random() < 0.7;
      const x = before ? Math.round(-20 * Math.log(1 - random()) * 100) / 100 : 0;
      if (before) events.push(track("buy", { ms: at - 2 * DAY_MS, unit, value: x }));
      if (i % 10 === 0) events.push(track("buy", { ms: at - 10 * DAY_MS, unit, value: 1000 }));
      events.push(exposure(POLICY, allocationKey, { ms: at, unit }));
      const bought = random() < 0.6;
      const y = bought ? Math.round((10 + 0.8 * x + 5 * random() + (allocationKey === "treatment" ? 3 : 0)) * 100) / 100 : 0;
      if (bought) events.push(track("buy", { ms: at + HOUR_MS, unit, value: y }));
      const viewed = random() < 0.9;
      if (viewed) events.push(track("view", { ms: at + 2 * HOUR_MS, unit }));
      units.push({ allocationKey, x, before, y, bought, viewed });
    }
  }
  return { events: events.sort((a, b) => (a.receivedAt < b.receivedAt ? -1 : a.receivedAt > b.receivedAt ? 1 : 0)), units };
}

const sum = (xs: readonly number[]) => xs.reduce((s, v) => s + v, 0);
function summaryOf(values: readonly number[]): Summary {
  const mean = sum(values) / values.length;
  return { units: values.length, mean, variance: sum(values.map((v) => (v - mean) ** 2)) / (values.length - 1) };
}
function covariates(units: readonly Unit[], value: (u: Unit) => [x: number, y: number]): CovariateSums {
  const xy = units.map(value);
  return { units: units.length, x: sum(xy.map(([x]) => x)), x2: sum(xy.map(([x]) => x * x)), y: sum(xy.map(([, y]) => y)), y2: sum(xy.map(([, y]) => y * y)), xy: sum(xy.map(([x, y]) => x * y)) };
}

type Json = {
  time: string;
  from: string;
  to: string;
  preperiod?: { from: string; to: string };
  metrics: { event: string; kind: string; cap?: { quantile: number; value: number }; allocations: Record<string, unknown>[] }[];
};

async function resultsOf(data: string, ...args: string[]): Promise<Json> {
  const run = await vane("results", "cuped-exp", ...args, "--until", iso(START_MS + 20 * DAY_MS), "--json", "--data", data);
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.out) as Json;
}

const closeTo = (got: unknown, want: unknown): void => {
  if (typeof want === "number") expect(got as number).toBeCloseTo(want, 8);
  else if (Array.isArray(want)) want.forEach((w, i) => closeTo((got as unknown[])[i], w));
  else if (typeof want === "object" && want !== null) {
    expect(Object.keys(got as object).sort()).toEqual(Object.keys(want).sort());
    for (const [k, w] of Object.entries(want)) closeTo((got as Record<string, unknown>)[k], w);
  } else expect(got).toEqual(want);
};

describe("vane results: CUPED, sequential, Bayesian, corrections, ratios, caps", () => {
  it("every new figure as computed from the simulated units", async () => {
    const { events, units } = experiment();
    const data = await storeWith(events, [POLICY]);
    const args = ["--metric", "buy:value", "--metric", "buy", "--metric", "buy:value/view", "--pre-period", "7d", "--sequential", "--engine", "bayesian", "--correction", "holm"];
    const got = await resultsOf(data, ...args);
    expect(got.time).toBe("event");
    expect(got.preperiod).toEqual({ from: iso(Date.parse(got.from) - 7 * DAY_MS), to: got.to });
    const [arms, treatment, control] = [units, units.filter((u) => u.allocationKey === "treatment"), units.filter((u) => u.allocationKey === "control")];
    const pValues: number[] = [];
    const checks = [
      { summary: (us: Unit[]) => summaryOf(us.map((u) => u.y)), covariate: (u: Unit): [number, number] => [u.x, u.y] },
      { summary: (us: Unit[]) => summaryOf(us.map((u) => (u.bought ? 1 : 0))), covariate: (u: Unit): [number, number] => [u.before ? 1 : 0, u.bought ? 1 : 0] },
      {
        summary: (us: Unit[]) => ratioSummary({ units: us.length, m: sum(us.map((u) => u.y)), m2: sum(us.map((u) => u.y ** 2)), d: sum(us.map((u) => (u.viewed ? 1 : 0))), d2: sum(us.map((u) => (u.viewed ? 1 : 0))), md: sum(us.map((u) => (u.viewed ? u.y : 0))) })!,
        covariate: undefined,
      },
    ];
    checks.forEach((check, m) => {
      const metric = got.metrics[m]!;
      const [t, c] = [check.summary(treatment), check.summary(control)];
      const lift = compare(t, c)!;
      const mine = metric.allocations[1]!;
      closeTo(mine.mean, t.mean);
      closeTo(mine.lift, lift.lift);
      closeTo(mine.sequential, sequentialFigures(lift, 1000));
      closeTo(mine.bayesian, bayesianFigures(lift));
      if (check.covariate === undefined) expect(mine.cuped).toBeUndefined();
      else closeTo(mine.cuped, cupedFigures(covariates(treatment, check.covariate), covariates(control, check.covariate), [covariates(arms, check.covariate)]));
      pValues.push(lift.pValue);
      expect(metric.allocations[0]!.cuped).toBeUndefined();
    });
    expect(got.metrics.map((m) => m.kind)).toEqual(["value", "conversion", "ratio"]);
    // The value's covariate is strongly correlated: CUPED removes a good part of the variance (ρ² ≈ 0.25 here, buying or not being independent of x).
    expect((got.metrics[0]!.allocations[1]!.cuped as { varianceReduction: number }).varianceReduction).toBeGreaterThan(0.2);
    closeTo(got.metrics.map((m) => m.allocations[1]!.adjustedPValue), adjustPValues(pValues, "holm"));
  });

  it("--cap winsorizes value metrics at the quantile of the units' values, pre-period too", async () => {
    const { events, units } = experiment();
    const data = await storeWith(events, [POLICY]);
    const got = await resultsOf(data, "--metric", "buy:value", "--metric", "buy", "--cap", "0.9", "--pre-period", "7d");
    const bought = units.filter((u) => u.bought).map((u) => u.y).sort((a, b) => a - b);
    const cap = bought[Math.ceil(0.9 * bought.length) - 1]!;
    expect(got.metrics[0]!.cap).toEqual({ quantile: 0.9, value: cap });
    expect(got.metrics[1]!.cap).toBeUndefined();
    const capped = (v: number) => Math.min(v, cap);
    const treatment = units.filter((u) => u.allocationKey === "treatment");
    closeTo(got.metrics[0]!.allocations[1]!.mean, sum(treatment.map((u) => capped(u.y))) / treatment.length);
    const covariate = (u: Unit): [number, number] => [capped(u.x), capped(u.y)];
    closeTo(got.metrics[0]!.allocations[1]!.cuped, cupedFigures(covariates(treatment, covariate), covariates(units.filter((u) => u.allocationKey === "control"), covariate), [covariates(units, covariate)]));
  });

  it("the terminal shows each view in a second table under its metric", async () => {
    const { events } = experiment();
    const data = await storeWith(events, [POLICY]);
    const args = ["--metric", "buy:value", "--metric", "buy:value/view", "--pre-period", "7d", "--sequential", "--engine", "bayesian", "--correction", "bh"];
    const run = await vane("results", "cuped-exp", ...args, "--until", iso(START_MS + 20 * DAY_MS), "--data", data);
    expect(run.code).toBe(0);
    const json = await resultsOf(data, ...args);
    const views = run.out.split("\n").filter((line) => line.startsWith("ALLOCATION  CUPED LIFT") || line.startsWith("ALLOCATION  SEQUENTIAL"));
    expect(views).toHaveLength(2); // the value metric has CUPED; the ratio has none
    expect(views[0]).toMatch(/CUPED LIFT\s+95% CI\s+P\s+VAR-\s+SEQUENTIAL 95% CI\s+P\s+P\(BEAT CONTROL\)\s+EXPECTED LOSS\s+ADJUSTED P/);
    const chance = (json.metrics[0]!.allocations[1]!.bayesian as { chanceToBeatControl: number }).chanceToBeatControl;
    expect(run.out).toContain(`${(100 * chance).toFixed(1)}%`);
    expect(run.out).toContain("Metric buy:value/view: ratio (delta method)");
    expect(run.out).toContain("CUPED: covariate = the unit's same metric in the 7 days before its first exposure");
  });

  it("a ratio over an event nobody sent has no lift, not a lift of 0", async () => {
    const { events } = experiment();
    const data = await storeWith(events, [POLICY]);
    const got = await resultsOf(data, "--metric", "buy:value/nothing");
    expect(got.metrics[0]!.allocations.map((a) => [a.mean, a.lift])).toEqual([[0, undefined], [0, undefined]]);
  });

  it("refuses bad options with the usage (exit 2), a ratio on an adaptive policy (exit 1)", async () => {
    const data = await storeWith([], [POLICY]);
    for (const bad of [["--engine", "magic"], ["--correction", "bonferroni"], ["--cap", "1.5"], ["--cap", "0"], ["--pre-period", "0d"], ["--pre-period", "week"], ["--metric", "buy/"], ["--metric", "a/b/c"]]) {
      const run = await vane("results", "cuped-exp", "--metric", "buy", ...bad, "--data", data);
      expect(run.code, bad.join(" ")).toBe(2);
      expect(run.err).toContain(bad[0]);
    }
    const bandit: Policy = { ...staticPolicy("pol-bandit", "bandit-exp", [{ key: "a", buckets: 500 }, { key: "b", buckets: 500 }]), kind: "epsilon_greedy", reward: { event: "buy", type: "binary", windowSeconds: 3600 }, weights: [0.5, 0.5] } as Policy;
    const adaptive = await storeWith([], [bandit]);
    const run = await vane("results", "bandit-exp", "--metric", "buy:value/view", "--data", adaptive);
    expect(run.code).toBe(1);
    expect(run.err).toContain("ratio");
  });

  it("an adaptive policy gets no CUPED (its means are weighted), the other views still", async () => {
    const bandit = { ...staticPolicy("pol-bandit", "bandit-exp", [{ key: "control", buckets: 500 }, { key: "b", buckets: 500 }]), kind: "epsilon_greedy", reward: { event: "buy", type: "binary", windowSeconds: 3600 }, weights: [0.5, 0.5] } as Policy;
    const events: StoredEvent[] = [];
    for (let i = 0; i < 40; i++) {
      const unit = `u${i}`;
      const allocationKey = i % 2 === 0 ? "control" : "b";
      events.push(track("buy", { ms: START_MS + DAY_MS, unit, value: i }), exposure(bandit, allocationKey, { ms: START_MS + 2 * DAY_MS, unit, probability: 0.5 }));
      if (i % 3 !== 0) events.push(track("buy", { ms: START_MS + 2 * DAY_MS + HOUR_MS, unit, value: i + 1 }));
    }
    const data = await storeWith(events, [bandit]);
    const run = await vane("results", "bandit-exp", "--metric", "buy:value", "--pre-period", "7d", "--sequential", "--until", iso(START_MS + 5 * DAY_MS), "--json", "--data", data);
    expect(run.code).toBe(0);
    const got = JSON.parse(run.out) as Json;
    expect(got.preperiod).toBeUndefined();
    expect(got.metrics[0]!.allocations[1]!.cuped).toBeUndefined();
    expect(got.metrics[0]!.allocations[1]!.sequential).toBeDefined();
  });
});
