// `vane results` on a real SQLite store holding simulated experiments with known truth: units and
// conversions exact, means, variances and lifts as computed from the simulated units without the
// store, SRM flagged when the split is off and not when it is right, guardrails' 30-unit rule,
// windows, time bounds, tenancy, units in two allocations, adaptive policies, refusals.
import { describe, expect, it } from "vitest";
import { compare, type Summary } from "../../src/analysis/results/compare.js";
import type { Policy } from "../../src/bundle/types.js";
import type { StoredEvent } from "../../src/store/types.js";
import { type ArmTruth, type SimulatedUnit, START_MS, exposure, iso, simulateExperiment, staticPolicy, track } from "../analysis/results/experiment.js";
import { seeded } from "../analysis/simulate.js";
import { vane } from "./helpers.js";
import { storeWith } from "./results-store.js";

const HOUR_MS = 3_600_000;

interface JsonAllocation {
  allocationKey: string;
  units: number;
  conversions: number;
  mean: number;
  variance: number;
  lift?: number;
  liftInterval?: [number, number];
  relativeLift?: number;
  relativeInterval?: [number, number];
  pValue?: number;
  status?: string;
}
interface JsonResults {
  policyId: string;
  policyKey: string;
  layerId: string;
  from: string | null;
  to: string;
  allocations: { allocationKey: string; allocationName: string; units: number }[];
  srm: { expected: Record<string, number>; observed: Record<string, number>; pValue: number | null; mismatch: boolean };
  metrics: { event: string; kind: string; guardrail?: string; allocations: JsonAllocation[] }[];
}

async function results(data: string, ...args: string[]): Promise<JsonResults> {
  const run = await vane("results", ...args, "--json", "--data", data);
  expect(run.err).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.out) as JsonResults;
}

/** Mean and sample variance of the units' values: the figures without the store. */
function summaryOf(units: readonly SimulatedUnit[], value: (u: SimulatedUnit) => number): Summary {
  const values = units.map(value);
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  return { units: values.length, mean, variance: values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1) };
}

/** Every figure of one metric's allocations against the simulated units. */
function expectMetric(metric: JsonResults["metrics"][number], units: readonly SimulatedUnit[], control: string): void {
  const event = metric.event;
  const value = metric.kind === "conversion" ? (u: SimulatedUnit) => (u.counted[event]!.events > 0 ? 1 : 0) : (u: SimulatedUnit) => u.counted[event]!.value;
  const controlSummary = summaryOf(units.filter((u) => u.allocationKey === control), value);
  for (const got of metric.allocations) {
    const mine = units.filter((u) => u.allocationKey === got.allocationKey);
    const want = summaryOf(mine, value);
    expect(got.units).toBe(mine.length);
    expect(got.conversions).toBe(mine.filter((u) => u.counted[event]!.events > 0).length);
    expect(got.mean).toBeCloseTo(want.mean, 9);
    expect(got.variance).toBeCloseTo(want.variance, 6);
    if (got.allocationKey === control) {
      expect(got.lift).toBeUndefined();
      continue;
    }
    const lift = compare(want, controlSummary)!;
    expect(got.lift).toBeCloseTo(want.mean - controlSummary.mean, 9);
    expect(got.liftInterval![0]).toBeCloseTo(lift.liftInterval[0], 9);
    expect(got.liftInterval![1]).toBeCloseTo(lift.liftInterval[1], 9);
    expect(got.relativeLift).toBeCloseTo(want.mean / controlSummary.mean - 1, 9);
    expect(got.relativeInterval![0]).toBeCloseTo(lift.relativeInterval![0], 9);
    expect(got.pValue).toBeCloseTo(lift.pValue, 9);
  }
}

const CHECKOUT = staticPolicy("pol-checkout", "checkout-exp", [
  { key: "control", buckets: 500 },
  { key: "green", buckets: 250 },
  { key: "gold", buckets: 250 },
]);
const CHECKOUT_ARMS: Record<string, ArmTruth> = {
  control: { units: 1000, events: { purchase: { rate: 0.1, meanValue: 40 }, error: { rate: 0.02 } } },
  green: { units: 500, events: { purchase: { rate: 0.16, meanValue: 40 }, error: { rate: 0.02 } } },
  gold: { units: 500, events: { purchase: { rate: 0.1, meanValue: 70 }, error: { rate: 0.12 } } },
};

describe("vane results POLICY", () => {
  it("JSON: the exact shape, units and conversions exact, lifts as computed without the store, no SRM", async () => {
    const experiment = simulateExperiment(CHECKOUT, CHECKOUT_ARMS, { seed: 18, hours: 48 });
    const data = await storeWith(experiment.events, [CHECKOUT]);
    const got = await results(data, "checkout-exp", "--metric", "purchase", "--metric", "purchase:value", "--guardrail", "error:increase", "--until", "2026-11-10T00:00:00Z");
    expect(Object.keys(got)).toEqual(["policyId", "policyKey", "layerId", "from", "to", "time", "allocations", "srm", "metrics"]);
    expect(got).toMatchObject({ policyId: "pol-checkout", policyKey: "checkout-exp", layerId: "layer-pol-checkout", to: "2026-11-10T00:00:00.000Z" });
    expect(got.from).toBe(iso(Math.min(...experiment.units.map((u) => u.exposedMs))));
    expect(got.allocations).toEqual([
      { allocationKey: "control", allocationName: "control", units: 1000 },
      { allocationKey: "green", allocationName: "green", units: 500 },
      { allocationKey: "gold", allocationName: "gold", units: 500 },
    ]);
    expect(got.srm.expected).toEqual({ control: 0.5, green: 0.25, gold: 0.25 });
    expect(got.srm.observed).toEqual({ control: 1000, green: 500, gold: 500 });
    expect(got.srm).toMatchObject({ pValue: 1, mismatch: false });
    expect(got.metrics.map((m) => [m.event, m.kind, m.guardrail])).toEqual([["purchase", "conversion", undefined], ["purchase", "value", undefined], ["error", "conversion", "increase"]]);
    for (const metric of got.metrics) expectMetric(metric, experiment.units, "control");
    expect(Object.keys(got.metrics[0]!.allocations[1]!)).toEqual(["allocationKey", "units", "conversions", "mean", "variance", "lift", "liftInterval", "relativeLift", "relativeInterval", "pValue"]);
    // The truth: green converts better (0.16 vs 0.10), gold's baskets are bigger, gold errs more.
    const [conversion, value, errors] = got.metrics;
    expect(conversion!.allocations[1]!.liftInterval![0]).toBeGreaterThan(0);
    expect(value!.allocations[2]!.liftInterval![0]).toBeGreaterThan(0);
    expect(errors!.allocations.map((a) => a.status)).toEqual([undefined, "ok", "violated"]);
  });

  it("flags a sample-ratio mismatch when the split is off, and reports units in two allocations", async () => {
    const policy = staticPolicy("pol-srm", "srm-test", [{ key: "control", buckets: 500 }, { key: "treatment", buckets: 500 }]);
    const arms = { control: { units: 1100, events: { purchase: { rate: 0.1 } } }, treatment: { units: 900, events: { purchase: { rate: 0.1 } } } };
    const experiment = simulateExperiment(policy, arms, { seed: 5, hours: 24 });
    // One unit of control later exposed to treatment too: counted in both.
    const crossed = exposure(policy, "treatment", { ms: START_MS + 30 * HOUR_MS, unit: experiment.units[0]!.unit });
    const data = await storeWith([...experiment.events, crossed], [policy]);
    const run = await vane("results", "pol-srm", "--metric", "purchase", "--until", "2026-11-10T00:00:00Z", "--json", "--data", data);
    expect(run.err).toBe("warning: 1 units were exposed to more than one allocation; each counts in every one (a bucketing or identity problem)");
    const got = JSON.parse(run.out) as JsonResults;
    expect(got.srm.observed).toEqual({ control: 1100, treatment: 901 });
    // χ² on one df = (O − E)²/E summed; p = P(|Z| > √χ²): 2001 units against 1000.5 each.
    expect(got.srm.mismatch).toBe(true);
    expect(got.srm.pValue!).toBeLessThan(1e-5);
    const text = await vane("results", "srm-test", "--metric", "purchase", "--data", data);
    expect(text.out).toMatch(/Sample ratio: MISMATCH, p = <0\.0001/);
    expect(text.out).toContain("warning: 1 units were exposed to more than one allocation");
  });

  it("guardrails: insufficient_data with 20 units in a treatment, evaluated from 30 on", async () => {
    const policy = staticPolicy("pol-guard", "guard-test", [{ key: "control", buckets: 900 }, { key: "tiny", buckets: 20 }, { key: "small", buckets: 30 }, { key: "big", buckets: 50 }]);
    const arms: Record<string, ArmTruth> = {
      control: { units: 900, events: { error: { rate: 0.05 } } },
      tiny: { units: 20, events: { error: { rate: 0.9 } } },
      small: { units: 30, events: { error: { rate: 0.9 } } },
      big: { units: 50, events: { error: { rate: 0.05 } } },
    };
    const data = await storeWith(simulateExperiment(policy, arms, { seed: 9, hours: 12 }).events, [policy]);
    const got = await results(data, "guard-test", "--guardrail", "error:increase", "--until", "2026-11-10T00:00:00Z");
    const statuses = Object.fromEntries(got.metrics[0]!.allocations.map((a) => [a.allocationKey, a.status]));
    expect(statuses).toEqual({ control: undefined, tiny: "insufficient_data", small: "violated", big: "ok" });
    // The interval of the tiny allocation still exists: only the status waits for 30 units.
    expect(got.metrics[0]!.allocations[1]!.liftInterval![0]).toBeGreaterThan(0);
    const decrease = await results(data, "guard-test", "--guardrail", "error:decrease", "--until", "2026-11-10T00:00:00Z");
    expect(decrease.metrics[0]!.allocations.map((a) => a.status)).toEqual([undefined, "insufficient_data", "ok", "ok"]);
  });

  it("--window counts only events soon enough after exposure; --since and --until bound the exposures", async () => {
    const policy = staticPolicy("pol-win", "win-test", [{ key: "control", buckets: 500 }, { key: "b", buckets: 500 }]);
    const t0 = START_MS;
    const events = [
      exposure(policy, "control", { ms: t0, unit: "u1" }),
      track("buy", { ms: t0 + 2 * HOUR_MS, unit: "u1", value: 5 }),
      track("buy", { ms: t0 + 30 * HOUR_MS, unit: "u1", value: 7 }),
      exposure(policy, "b", { ms: t0 + HOUR_MS, unit: "u2" }),
      track("buy", { ms: t0 + 26 * HOUR_MS, unit: "u2", value: 3 }),
      exposure(policy, "b", { ms: t0 + 50 * HOUR_MS, unit: "u3" }),
      track("buy", { ms: t0 + 51 * HOUR_MS, unit: "u3", value: 4 }),
    ];
    const data = await storeWith(events, [policy]);
    const sums = (r: JsonResults) => r.metrics[0]!.allocations.map((a) => [a.allocationKey, a.units, a.conversions, a.mean]);
    const all = await results(data, "win-test", "--metric", "buy:value", "--until", "2026-11-10T00:00:00Z");
    expect(sums(all)).toEqual([["control", 1, 1, 12], ["b", 2, 2, 3.5]]);
    const day = await results(data, "win-test", "--metric", "buy:value", "--window", "buy=1d", "--until", "2026-11-10T00:00:00Z");
    expect(sums(day)).toEqual([["control", 1, 1, 5], ["b", 2, 1, 2]]);
    const hours25 = await results(data, "win-test", "--metric", "buy:value", "--window", "25h", "--until", "2026-11-10T00:00:00Z");
    expect(sums(hours25)).toEqual([["control", 1, 1, 5], ["b", 2, 2, 3.5]]);
    const bounded = await results(data, "win-test", "--metric", "buy:value", "--since", iso(t0 + HOUR_MS), "--until", iso(t0 + 40 * HOUR_MS));
    expect(bounded).toMatchObject({ from: iso(t0 + HOUR_MS), to: iso(t0 + 40 * HOUR_MS) });
    expect(sums(bounded)).toEqual([["control", 0, 0, 0], ["b", 1, 1, 3]]);
  });

  it("one unit's value past floating point's squares leaves that allocation without a lift; the rest of the report stands", async () => {
    const experiment = simulateExperiment(CHECKOUT, CHECKOUT_ARMS, { seed: 18, hours: 48 });
    // A valid finite value whose square is Infinity: a buggy client's, or an adversary's.
    const gold = experiment.units.find((u) => u.allocationKey === "gold" && u.counted.purchase!.events > 0)!;
    const huge = track("purchase", { ms: gold.exposedMs + HOUR_MS, unit: gold.unit, value: 1e200 });
    const data = await storeWith([...experiment.events, huge], [CHECKOUT]);
    const got = await results(data, "checkout-exp", "--metric", "purchase:value", "--metric", "purchase", "--until", "2026-11-10T00:00:00Z");
    const [value, conversion] = got.metrics;
    expect(value!.allocations.map((a) => [a.allocationKey, a.lift === undefined])).toEqual([["control", true], ["green", false], ["gold", true]]);
    expect(value!.allocations[2]!.mean).toBeGreaterThan(1e196);
    expectMetric(conversion!, experiment.units, "control"); // the unit had converted: the conversions are the simulation's
    const text = await vane("results", "checkout-exp", "--metric", "purchase:value", "--data", data);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/\ngold +500 +\d+ +[\d.]+e\+19\d +- +- +- +- +-\n/);
  });

  it("reads only the policy's org, project and env; skips attribution-only decisions", async () => {
    const policy = staticPolicy("pol-ten", "ten-test", [{ key: "control", buckets: 500 }, { key: "b", buckets: 500 }]);
    const at = { ms: START_MS };
    const events = [
      exposure(policy, "control", { ...at, unit: "u1" }),
      track("buy", { ...at, unit: "u1" }),
      exposure(policy, "control", { ...at, unit: "u2", tenant: { orgId: "org-2" } }),
      exposure(policy, "control", { ...at, unit: "u3", tenant: { projectId: "blog" } }),
      exposure(policy, "b", { ...at, unit: "u4", tenant: { env: "staging" } }),
      exposure(policy, "b", { ...at, unit: "u5", type: "decision", attributionOnly: true }),
      exposure(policy, "b", { ...at, unit: "u6" }),
      track("buy", { ...at, unit: "u6", tenant: { orgId: "org-2" } }),
    ];
    const got = await results(await storeWith(events, [policy]), "ten-test", "--metric", "buy", "--until", "2026-11-10T00:00:00Z");
    expect(got.srm.observed).toEqual({ control: 1, b: 1 });
    expect(got.metrics[0]!.allocations.map((a) => a.conversions)).toEqual([1, 0]);
  });

  it("adaptive: means weighted by the logged propensities, no SRM test; refused without propensities", async () => {
    const base = staticPolicy("pol-bandit", "bandit", [{ key: "a", buckets: 1000 }, { key: "b", buckets: 1000 }]);
    const bandit: Policy = { ...base, kind: "epsilon_greedy", reward: { event: "buy", type: "binary", windowSeconds: 3600 }, weights: [0.8, 0.2] };
    // Day 1 plays a with 0.8 and everyone converts at 0.3; day 2 plays b with 0.8 and everyone
    // converts at 0.1. Both arms are worth 0.2; the raw rates say a is better.
    const random = seeded(77);
    const units: { unit: string; arm: string; p: number; converted: boolean }[] = [];
    const events: StoredEvent[] = [];
    for (let i = 0; i < 2000; i++) {
      const day = i < 1000 ? 0 : 1;
      const favourite = day === 0 ? "a" : "b";
      const arm = random() < 0.8 ? favourite : favourite === "a" ? "b" : "a";
      const p = arm === favourite ? 0.8 : 0.2;
      const converted = random() < (day === 0 ? 0.3 : 0.1);
      const ms = START_MS + day * 24 * HOUR_MS + i * 60_000;
      units.push({ unit: `u${i}`, arm, p, converted });
      events.push(exposure(bandit, arm, { ms, unit: `u${i}`, type: "decision", probability: p }));
      if (converted) events.push(track("buy", { ms: ms + 1000, unit: `u${i}` }));
    }
    const data = await storeWith(events, [bandit]);
    const got = await results(data, "bandit", "--metric", "buy", "--until", "2026-11-10T00:00:00Z");
    const count = (arm: string) => units.filter((u) => u.arm === arm).length;
    expect(got.srm).toEqual({ expected: {}, observed: { a: count("a"), b: count("b") }, pValue: null, mismatch: false });
    for (const arm of ["a", "b"]) {
      const mine = units.filter((u) => u.arm === arm);
      const weight = mine.reduce((s, u) => s + 1 / u.p, 0);
      const mean = mine.reduce((s, u) => s + (u.converted ? 1 / u.p : 0), 0) / weight;
      const n = mine.length;
      const se2 = (n / (n - 1)) * mine.reduce((s, u) => s + ((1 / u.p) * ((u.converted ? 1 : 0) - mean)) ** 2, 0) / weight ** 2;
      const figures = got.metrics[0]!.allocations.find((a) => a.allocationKey === arm)!;
      expect(figures.mean).toBeCloseTo(mean, 12);
      expect(figures.variance / n).toBeCloseTo(se2, 12);
      // Both arms convert at 0.2 over the two days: the weighted means say so, the raw rates do not.
      expect(mean).toBeCloseTo(0.2, 1);
    }
    const raw = got.metrics[0]!.allocations.map((a) => a.conversions / a.units);
    expect(Math.abs(raw[0]! - raw[1]!)).toBeGreaterThan(0.05);

    const unlogged = await storeWith([exposure(bandit, "a", { ms: START_MS, unit: "u1", type: "decision" })], [bandit]);
    const refused = await vane("results", "bandit", "--data", unlogged);
    expect(refused.code).toBe(1);
    expect(refused.err).toBe('vane results: policy "bandit" is adaptive, but 1 of 1 units\' first exposures have no propensity (probability) to weigh them by');
  });

  it("table: allocations, the SRM line, one table per metric with its guardrail status", async () => {
    const experiment = simulateExperiment(CHECKOUT, CHECKOUT_ARMS, { seed: 18, hours: 48 });
    const run = await vane("results", "pol-checkout", "--metric", "purchase", "--guardrail", "error:increase", "--data", await storeWith(experiment.events, [CHECKOUT]));
    expect(run.code).toBe(0);
    const lines = run.out.split("\n");
    expect(lines[0]).toBe("Policy checkout-exp (pol-checkout), static, layer layer-pol-checkout, in shop/production");
    expect(lines[1]).toMatch(/^Exposures 2026-11-01T\d\d:\d\d:00Z to \d{4}-.*Z: 2000 units$/);
    expect(run.out).toMatch(/\nALLOCATION +NAME +UNITS +SHARE +INTENDED\ncontrol +control +1000 +50\.0% +50\.0%\n/);
    expect(run.out).toContain("Sample ratio: ok, p = 1.0000 (chi-square)");
    expect(run.out).toContain("Metric error: conversion rate, guardrail: must not increase");
    expect(run.out).toMatch(/\ngold +500 +\d+ +0\.\d+ +\+0\.\d+ +\[\+0\.\d+, \+0\.\d+\] +\+\d+\.\d% +\[.*\] +<?0\.\d+ +violated\n/);
  });

  it("refuses bad usage (exit 2) and unknown policies (exit 1), naming the problem", async () => {
    const data = await storeWith([], [CHECKOUT]);
    const cases: [string[], number, RegExp][] = [
      [[], 2, /missing argument/],
      [["checkout-exp", "--metric", ":value"], 2, /--metric needs an event name/],
      [["checkout-exp", "--guardrail", "error"], 2, /--guardrail must be EVENT\[:value\]:increase\|decrease/],
      [["checkout-exp", "--guardrail", "error:up"], 2, /--guardrail must be/],
      [["checkout-exp", "--metric", "buy", "--window", "7 days"], 2, /--window must be \[EVENT=\]DURATION/],
      [["checkout-exp", "--metric", "buy", "--window", "sell=7d"], 2, /--window names "sell", which no --metric or --guardrail measures/],
      [["checkout-exp", "--since", "yesterday"], 2, /--since must be an ISO 8601 date or time/],
      [["checkout-exp", "--bogus"], 2, /Unknown option '--bogus'/],
      [["nope"], 1, /no production bundle has a policy "nope"/],
      [["checkout-exp", "--project", "blog"], 1, /no bundle for blog\/production/],
    ];
    for (const [args, code, message] of cases) {
      const run = await vane("results", ...args, "--data", data);
      expect(run.code, args.join(" ")).toBe(code);
      expect(run.err).toMatch(message);
    }
    const empty = await results(data, "checkout-exp", "--metric", "purchase");
    expect(empty.allocations.map((a) => a.units)).toEqual([0, 0, 0]);
    expect(empty.srm.pValue).toBeNull();
    expect(empty.from).toBeNull();
  });
});
