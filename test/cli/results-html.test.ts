// `vane results --html FILE` opened in headless Chromium with the network cut off: the page is
// self-contained, shows the tables with the JSON's numbers, plots each treatment's lift on its
// interval where the numbers put it, and the cumulative units per allocation. A screenshot goes
// to test-results/.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { launchChromium, pageErrors } from "../runtime/chromium.js";
import { START_MS, iso, simulateExperiment, staticPolicy } from "../analysis/results/experiment.js";
import { bundleFor, inStore, tempDir, vane } from "./helpers.js";

const SCREENSHOT = fileURLToPath(new URL("../../test-results/results-html.png", import.meta.url));
const POLICY = staticPolicy("pol-page", "page-exp", [{ key: "control", buckets: 400 }, { key: "green", buckets: 300 }, { key: "gold", buckets: 300 }]);

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

async function store(hours = 72): Promise<string> {
  const experiment = simulateExperiment(
    POLICY,
    {
      control: { units: 800, events: { purchase: { rate: 0.1, meanValue: 40 }, error: { rate: 0.02 } } },
      green: { units: 600, events: { purchase: { rate: 0.15, meanValue: 40 }, error: { rate: 0.02 } } },
      gold: { units: 600, events: { purchase: { rate: 0.1, meanValue: 60 }, error: { rate: 0.1 } } },
    },
    { seed: 4, hours },
  );
  const bundle: Bundle = bundleFor("shop", "2026-11-01T00:00:00Z");
  bundle.layers.push({ id: "layer-pol-page", policies: [POLICY] });
  const data = tempDir();
  await inStore(data, async (stores) => {
    await stores.bundles.put(bundle, iso(START_MS));
    await stores.events.append(experiment.events);
  });
  return data;
}

interface LiftJson {
  allocationKey: string;
  lift?: number;
  liftInterval?: [number, number];
  status?: string;
}

describe("vane results --html", () => {
  it("writes one self-contained page with the tables and plots, rendered offline in Chromium", async () => {
    const data = await store();
    const file = join(tempDir(), "results.html");
    const args = ["results", "page-exp", "--metric", "purchase", "--metric", "purchase:value", "--guardrail", "error:increase", "--until", "2026-11-10T00:00:00Z", "--data", data];
    const run = await vane(...args, "--json", "--html", file);
    expect(run.code).toBe(0);
    expect(run.err).toBe(`wrote ${file}`);
    const json = JSON.parse(run.out) as { metrics: { event: string; kind: string; allocations: LiftJson[] }[] };
    const html = readFileSync(file, "utf8");
    // Self-contained: no script, stylesheet link, image or font fetched from anywhere.
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(/i);

    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const requests: string[] = [];
    await context.route("**/*", (route) => {
      requests.push(route.request().url());
      return route.request().url().startsWith("file:") ? route.continue() : route.abort();
    });
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto(pathToFileURL(file).href);
    expect(requests.filter((url) => !url.startsWith("file:"))).toEqual([]);

    const allocationRows = await page.$$eval("#allocations tbody tr", (rows) => rows.map((r) => Array.from(r.querySelectorAll("td"), (td) => td.textContent)));
    expect(allocationRows).toEqual([["control", "control", "800", "40.0%"], ["green", "green", "600", "30.0%"], ["gold", "gold", "600", "30.0%"]]);
    expect(await page.textContent("#srm")).toMatch(/^Sample ratio ok: p = 1\.0000\.$/);
    expect(await page.$$eval("table.metric", (tables) => tables.length)).toBe(3);
    const statuses = await page.$$eval("table.metric[data-event=error] tbody tr", (rows) => rows.map((r) => r.lastElementChild!.textContent));
    expect(statuses).toEqual(["control", ...json.metrics[2]!.allocations.slice(1).map((a) => a.status)]);

    // Each lift plot: one group per treatment, its dot between the ends of its interval line, the
    // dots' order along x the order of the lifts, and the zero line where the numbers put 0.
    const plots = await page.$$eval("svg[aria-label^='lift of']", (svgs) =>
      svgs.map((svg) => ({
        zero: Number(svg.querySelector("line.zero")!.getAttribute("x1")),
        groups: Array.from(svg.querySelectorAll("g.lift"), (g) => ({
          allocation: g.getAttribute("data-allocation"),
          x1: Number(g.querySelector("line")!.getAttribute("x1")),
          x2: Number(g.querySelector("line")!.getAttribute("x2")),
          cx: Number(g.querySelector("circle")!.getAttribute("cx")),
        })),
      })),
    );
    expect(plots).toHaveLength(3);
    plots.forEach((plot, m) => {
      const treatments = json.metrics[m]!.allocations.slice(1);
      expect(plot.groups.map((g) => g.allocation)).toEqual(treatments.map((a) => a.allocationKey));
      plot.groups.forEach((g, i) => {
        const [low, high] = treatments[i]!.liftInterval!;
        expect(g.x1).toBeLessThan(g.cx);
        expect(g.cx).toBeLessThan(g.x2);
        // Linear scale: the dot divides the line as the lift divides the interval; 0 likewise.
        expect((g.cx - g.x1) / (g.x2 - g.x1)).toBeCloseTo((treatments[i]!.lift! - low) / (high - low), 2);
        expect((plot.zero - g.x1) / (g.x2 - g.x1)).toBeCloseTo((0 - low) / (high - low), 2);
      });
    });
    const cumulative = await page.$$eval("g.cumulative", (groups) => groups.map((g) => [g.getAttribute("data-allocation"), g.getAttribute("data-units")]));
    expect(cumulative).toEqual([["control", "800"], ["green", "600"], ["gold", "600"]]);
    const boxes = await page.$$eval("svg", (svgs) => svgs.map((svg) => svg.getBoundingClientRect().height));
    expect(boxes.every((h) => h > 50)).toBe(true);

    mkdirSync(fileURLToPath(new URL("../../test-results/", import.meta.url)), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });

  it("shows CUPED beside plain, the sequential interval and the Bayesian view, and the lift over days with its sequence", async () => {
    const data = await store();
    const file = join(tempDir(), "results.html");
    const args = ["results", "page-exp", "--metric", "purchase:value", "--until", "2026-11-10T00:00:00Z", "--data", data, "--pre-period", "7d", "--sequential", "--engine", "bayesian", "--correction", "holm"];
    const run = await vane(...args, "--json", "--html", file);
    expect(run.code).toBe(0);
    type Views = LiftJson & { cuped: { lift: number; liftInterval: [number, number] }; sequential: { liftInterval: [number, number] }; bayesian: { chanceToBeatControl: number } };
    const treatments = (JSON.parse(run.out) as { metrics: { allocations: Views[] }[] }).metrics[0]!.allocations.slice(1);
    const page = await browser.newPage({ viewport: { width: 1000, height: 1400 } });
    const errors = pageErrors(page);
    await page.goto(pathToFileURL(file).href);
    const views = await page.$$eval("table.views tbody tr", (rows) => rows.map((r) => Array.from(r.querySelectorAll("td"), (td) => td.textContent)));
    expect(views.map((r) => r[0])).toEqual(["green", "gold"]);
    views.forEach((row, i) => expect(row).toContain(`${(100 * treatments[i]!.bayesian.chanceToBeatControl).toFixed(1)}%`));
    // The plain interval's line gives the plot's scale; the CUPED and sequential lines sit where it puts their numbers.
    const groups = await page.$$eval("svg[aria-label^='lift of purchase per'] g.lift", (gs) =>
      gs.map((g) => {
        const ends = (selector: string) => [Number(g.querySelector(selector)!.getAttribute("x1")), Number(g.querySelector(selector)!.getAttribute("x2"))];
        return { plain: ends("line"), cuped: ends("line.cuped"), sequential: ends("line.sequential"), cupedDot: Number(g.querySelector("circle.cuped")!.getAttribute("cx")) };
      }),
    );
    groups.forEach((g, i) => {
      const a = treatments[i]!;
      const x = (v: number) => g.plain[0]! + ((v - a.liftInterval![0]) / (a.liftInterval![1] - a.liftInterval![0])) * (g.plain[1]! - g.plain[0]!);
      for (const [drawn, numbers] of [[g.cuped, a.cuped.liftInterval], [g.sequential, a.sequential.liftInterval]] as const) {
        expect(drawn[0]).toBeCloseTo(x(numbers[0]), 0);
        expect(drawn[1]).toBeCloseTo(x(numbers[1]), 0);
      }
      expect(g.cupedDot).toBeCloseTo(x(a.cuped.lift), 0);
      expect(g.sequential[1]! - g.sequential[0]!).toBeGreaterThan(g.plain[1]! - g.plain[0]!);
    });
    // Over days: one series per treatment, a dot per day's end from the first exposure (Nov 1) to --until, each inside its band.
    const looks = await page.$$eval("svg[aria-label$='over days with its sequential interval'] g.looks", (gs) =>
      gs.map((g) => ({
        allocation: g.getAttribute("data-allocation"),
        dots: Array.from(g.querySelectorAll("circle"), (c) => ({ at: c.getAttribute("data-at"), y: Number(c.getAttribute("cy")) })),
        band: g.querySelector("polygon")!.getAttribute("points")!.split(" ").map((p) => Number(p.split(",")[1])),
      })),
    );
    expect(looks.map((l) => l.allocation)).toEqual(["green", "gold"]);
    for (const l of looks) {
      expect(l.dots.map((d) => d.at)).toEqual(Array.from({ length: 9 }, (_, d) => `2026-11-${String(d + 2).padStart(2, "0")}T00:00:00.000Z`));
      l.dots.forEach((d, i) => {
        expect(d.y).toBeGreaterThanOrEqual(l.band[i]!); // the upper edge (smaller y) comes first
        expect(d.y).toBeLessThanOrEqual(l.band[l.band.length - 1 - i]!);
      });
    }
    await page.screenshot({ path: fileURLToPath(new URL("../../test-results/results-html-statistics.png", import.meta.url)), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("labels a one-hour window's time axis with distinct hours, round lift ticks, and no label past the plot's edge", async () => {
    const data = await store(1);
    const file = join(tempDir(), "results.html");
    const run = await vane("results", "page-exp", "--metric", "purchase", "--until", "2026-11-10T00:00:00Z", "--data", data, "--html", file);
    expect(run.code).toBe(0);
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    await page.goto(pathToFileURL(file).href);
    // Each plot's axis labels: the text under its axis line, with where it is drawn.
    const axes = await page.$$eval("svg", (svgs) =>
      svgs.map((svg) => {
        const axisY = Number(svg.querySelector("line")!.getAttribute("y1"));
        const width = Number(svg.getAttribute("width"));
        const labels = Array.from(svg.querySelectorAll("text"))
          .filter((t) => Number(t.getAttribute("y")) > axisY)
          .map((t) => {
            const box = t.getBBox();
            return { text: t.textContent ?? "", left: box.x, right: box.x + box.width };
          });
        return { label: svg.getAttribute("aria-label"), width, labels };
      }),
    );
    const [time, lift] = axes;
    expect(time!.label).toBe("cumulative units per allocation over time");
    expect(time!.labels.map((l) => l.text)).toEqual(["11-01 00:00", "11-01 01:00"]);
    expect(lift!.label).toBe("lift of purchase per allocation with 95% intervals");
    const liftTicks = lift!.labels.map((l) => Number(l.text));
    const step = liftTicks[1]! - liftTicks[0]!;
    expect(liftTicks.length).toBeGreaterThanOrEqual(3);
    expect(step / 10 ** Math.floor(Math.log10(step) + 1e-9)).toBeOneOf([1, 2, 5].map((m) => expect.closeTo(m, 6)));
    for (const tick of liftTicks) expect(Math.abs(Math.round(tick / step) * step - tick)).toBeLessThan(step * 1e-6);
    for (const axis of axes) {
      for (const l of axis.labels) {
        expect(l.left, `${axis.label}: ${l.text}`).toBeGreaterThanOrEqual(0);
        expect(l.right, `${axis.label}: ${l.text}`).toBeLessThanOrEqual(axis.width);
      }
    }
    await page.close();
  });
});
