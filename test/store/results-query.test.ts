// The SQL behind `vane results` against a second formulation of its rules (docs/results.md
// "Units", "Metrics") written plainly over the events in memory, on seeded random event streams
// full of edge cases: other policies and tenants, events without keys, unknown allocations,
// attribution-only layers, missing and invalid propensities, values that are not numbers, events
// before exposure and after the window, tracks sent in the exposure's batch that happened before
// it. Both order events by when they happened (eventTime, else the timestamp). The same for the
// CUPED pre-period's sums, the winsorizing caps and the ratio products, and for the looks of one
// read against a read per look. DuckDB runs the SQL over the Parquet archive and the log's tail:
// half the events in files, half in the tail, so the view's union is checked too.
import { describe, expect, it } from "vitest";
import type { MetricSums, ResultsAggregates, ResultsQuery } from "../../src/analysis/results/source.js";
import { join } from "node:path";
import { EventView } from "../../src/store/columnar/event-view.js";
import { DuckResultsSource } from "../../src/store/columnar/results-sql.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import type { StoredEvent } from "../../src/store/types.js";
import { seeded } from "../analysis/simulate.js";
import { inStore, tempDir } from "../cli/helpers.js";

const T0 = Date.parse("2026-11-01T00:00:00.000Z");
const MINUTE_MS = 60_000;

function randomEvents(seed: number): StoredEvent[] {
  const random = seeded(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const events: StoredEvent[] = [];
  const times = new Set<number>();
  for (let i = 0; i < 300; i++) {
    const unitKey = `u${Math.floor(random() * 25)}`;
    const exposing = random() < 0.45;
    let ms = T0 + Math.floor(random() * 600) * MINUTE_MS + Math.floor(random() * 1000);
    // A track event sent in the exposure's batch is received at the same time; when it happened
    // (its eventTime) may be before the exposure or after it: only after counts.
    const sameBatch = events.filter((e) => e.unitKey === unitKey && e.type !== "track");
    let received = ms;
    if (!exposing && sameBatch.length > 0 && random() < 0.3) received = Date.parse(pick(sameBatch).receivedAt);
    else if (random() < 0.5) received = ms + Math.floor(random() * 90) * MINUTE_MS; // sent in a later batch
    ms = Math.min(ms, received);
    while (exposing && times.has(ms)) ms -= 1; // distinct exposure times: "first" is then unambiguous
    if (exposing) times.add(ms);
    const at = new Date(ms).toISOString();
    const eventTime = ms === received && random() < 0.5 ? {} : { eventTime: at };
    const tenant = random() < 0.85 ? { orgId: "org-1", projectId: "shop", env: "production" } : pick([{ orgId: "org-2", projectId: "shop", env: "production" }, { orgId: "org-1", projectId: "blog", env: "production" }, { orgId: "org-1", projectId: "shop", env: "staging" }]);
    const base = { id: `e${seed}-${i}`, receivedAt: new Date(received).toISOString(), ...tenant, unitKey, timestamp: at };
    if (exposing) {
      const type = pick(["exposure", "decision"] as const);
      const allocation = pick(["a", "b", "c", "gone"]);
      const layer: Record<string, unknown> = { layerId: "l1", bucket: 1, policyId: pick(["pol", "pol", "pol", "other"]), allocationId: `pol-${allocation}` };
      if (random() < 0.6) layer.policyKey = random() < 0.9 ? "exp" : "not-exp";
      if (random() < 0.6) layer.allocationKey = allocation;
      if (random() < 0.7) layer.probability = pick([0.2, 0.5, 0.8, 1, 0, 1.5, "0.5"]);
      if (random() < 0.1) layer.attributionOnly = true;
      const other = { layerId: "l2", bucket: 7, policyId: "pol-x", policyKey: "x", allocationKey: "a" };
      events.push({ ...base, type, body: { type, unitKey, timestamp: at, ...eventTime, layers: random() < 0.3 ? [other, layer] : [layer] } });
    } else {
      const name = pick(["buy", "buy", "error", "view"]);
      const value = pick([undefined, 1, 2.5, 10, "12", null]);
      events.push({ ...base, type: "track", name, body: { type: "track", unitKey, timestamp: at, event: name, ...eventTime, ...(value !== undefined && { value }) } });
    }
  }
  return events;
}

/** When an event happened: the eventTime the server set, else its timestamp (here never after its arrival). */
const timeOf = (e: StoredEvent): string => (e.body.eventTime as string | undefined) ?? e.timestamp;

/** The rules, plainly: first exposures per unit and allocation, then each metric's per-unit sums, by when events happened. */
function reference(events: readonly StoredEvent[], q: ResultsQuery): Pick<ResultsAggregates, "allocations" | "unitsInSeveral" | "unitsWithoutPropensity" | "metrics"> & { exposed: { unit: string; alloc: string; at: string }[] } {
  const mine = (e: StoredEvent) => e.orgId === q.orgId && e.projectId === q.projectId && e.env === q.env && timeOf(e) <= q.until;
  const first = new Map<string, { unit: string; alloc: string; at: string; p: unknown }>();
  for (const e of events) {
    if (!mine(e) || (e.type !== "exposure" && e.type !== "decision") || (q.since !== undefined && timeOf(e) < q.since)) continue;
    for (const layer of e.body.layers as Record<string, unknown>[]) {
      const policyMatches = layer.policyKey !== undefined ? layer.policyKey === q.policyKey : layer.policyId === q.policyId;
      if (!policyMatches || layer.attributionOnly === true) continue;
      const alloc = (layer.allocationKey as string | undefined) ?? q.allocationKeys[layer.allocationId as string] ?? (layer.allocationId as string);
      const id = `${e.unitKey}\u0000${alloc}`;
      const seen = first.get(id);
      if (seen === undefined || timeOf(e) < seen.at) first.set(id, { unit: e.unitKey, alloc, at: timeOf(e), p: layer.probability });
    }
  }
  const weight = (p: unknown) => (!q.weighted ? 1 : typeof p === "number" && p > 0 && p <= 1 ? 1 / p : 0);
  const exposed = [...first.values()];
  const allocs = [...new Set(exposed.map((x) => x.alloc))];
  const perUnit = new Map<string, number>();
  for (const x of exposed) perUnit.set(x.unit, (perUnit.get(x.unit) ?? 0) + 1);
  const metrics = q.metrics.map((m) =>
    allocs.map((alloc): MetricSums => {
      const sums = { allocationKey: alloc, units: 0, conversions: 0, w: 0, w2: 0, convertedW: 0, convertedW2: 0, wValue: 0, w2Value: 0, w2Value2: 0 };
      for (const x of exposed.filter((e) => e.alloc === alloc)) {
        const w = weight(x.p);
        sums.units += 1;
        sums.w += w;
        sums.w2 += w * w;
        const end = m.windowMs === undefined ? q.until : new Date(Date.parse(x.at) + m.windowMs).toISOString();
        const counted = events.filter((e) => mine(e) && e.type === "track" && e.name === m.event && e.unitKey === x.unit && timeOf(e) >= x.at && timeOf(e) <= end);
        if (counted.length === 0) continue;
        const y = counted.reduce((s, e) => s + (typeof e.body.value === "number" ? e.body.value : 0), 0);
        sums.conversions += 1;
        sums.convertedW += w;
        sums.convertedW2 += w * w;
        sums.wValue += w * y;
        sums.w2Value += w * w * y;
        sums.w2Value2 += w * w * y * y;
      }
      return sums;
    }),
  );
  return {
    exposed,
    allocations: allocs.map((alloc) => ({ allocationKey: alloc, units: exposed.filter((x) => x.alloc === alloc).length })),
    unitsInSeveral: [...perUnit.values()].filter((n) => n > 1).length,
    unitsWithoutPropensity: q.weighted ? exposed.filter((x) => weight(x.p) === 0).length : 0,
    metrics,
  };
}

/**
 * The extras plainly: per metric the units' summed values after exposure (as `reference`), the cap
 * at the ⌈q·k⌉-th smallest of them, each unit's capped value before exposure within the pre-period,
 * and the per-unit products.
 */
function referenceExtras(events: readonly StoredEvent[], q: ResultsQuery, exposedUnits: readonly { unit: string; alloc: string; at: string }[]) {
  const mine = (e: StoredEvent) => e.orgId === q.orgId && e.projectId === q.projectId && e.env === q.env && e.type === "track";
  const valueOf = (es: readonly StoredEvent[]) => es.reduce((s, e) => s + (typeof e.body.value === "number" ? e.body.value : 0), 0);
  const perMetric = q.metrics.map((m) => {
    const post = new Map<string, number>();
    const pre = new Map<string, number>();
    for (const x of exposedUnits) {
      const end = m.windowMs === undefined ? q.until : new Date(Date.parse(x.at) + m.windowMs).toISOString();
      const after = events.filter((e) => mine(e) && e.name === m.event && e.unitKey === x.unit && timeOf(e) >= x.at && timeOf(e) <= end && timeOf(e) <= q.until);
      if (after.length > 0) post.set(`${x.unit}\u0000${x.alloc}`, valueOf(after));
      const from = new Date(Date.parse(x.at) - q.preperiodMs!).toISOString();
      const before = events.filter((e) => mine(e) && e.name === m.event && e.unitKey === x.unit && timeOf(e) < x.at && timeOf(e) >= from);
      if (before.length > 0) pre.set(`${x.unit}\u0000${x.alloc}`, valueOf(before));
    }
    const sorted = [...post.values()].sort((a, b) => a - b);
    const cap = m.cap === undefined || sorted.length === 0 ? undefined : sorted[Math.max(1, Math.ceil(m.cap * sorted.length)) - 1]!;
    const capped = (v: number) => (cap !== undefined && v > cap ? cap : v);
    for (const [k, v] of post) post.set(k, capped(v));
    for (const [k, v] of pre) pre.set(k, capped(v));
    return { post, pre, cap };
  });
  return { perMetric, caps: perMetric.map((m) => m.cap) };
}

/** New units per hour of first exposure and allocation, in order of hour, then allocation. */
function hourlyOf(exposed: readonly { alloc: string; at: string }[]): ResultsAggregates["hourly"] {
  const counts = new Map<string, number>();
  for (const x of exposed) counts.set(`${x.at.slice(0, 13)}\u0000${x.alloc}`, (counts.get(`${x.at.slice(0, 13)}\u0000${x.alloc}`) ?? 0) + 1);
  return [...counts.keys()].sort((a, b) => (a < b ? -1 : 1)).map((k) => {
    const [hour, allocationKey] = k.split("\u0000") as [string, string];
    return { hour, allocationKey, units: counts.get(k)! };
  });
}

const byKey = <T extends { allocationKey: string }>(xs: readonly T[]) => [...xs].sort((a, b) => a.allocationKey.localeCompare(b.allocationKey));

/** The query of seed `seed` over the streams' tenant and policy, with `rest` on top. */
function queryFor(seed: number, rest: Pick<ResultsQuery, "until" | "metrics" | "weighted"> & Partial<ResultsQuery>): ResultsQuery {
  return {
    orgId: "org-1",
    projectId: "shop",
    env: "production",
    policyId: "pol",
    policyKey: "exp",
    allocationKeys: { "pol-a": "a", "pol-b": "b", "pol-c": "c" },
    since: seed % 3 === 0 ? new Date(T0 + 60 * MINUTE_MS).toISOString() : undefined,
    ...rest,
  };
}

/** A data folder holding `events`: the first half in the Parquet archive, the rest in the log's tail. */
async function storeOf(events: readonly StoredEvent[]): Promise<string> {
  const data = tempDir();
  await inStore(data, async (stores) => {
    await stores.events.append(events.slice(0, 150));
    await new ParquetPipeline({ events: stores.events, sink: new NodeFileSink(join(data, "parquet")) }).catchUp();
    await stores.events.append(events.slice(150));
  });
  return data;
}

/** The DuckDB source over the data folder's archive and log, its view closed after `use`. */
const withSource = <T>(data: string, use: (source: DuckResultsSource) => Promise<T>): Promise<T> =>
  inStore(data, async (stores) => {
    const view = await EventView.open({ events: stores.events, parquetDir: join(data, "parquet"), settings: { threads: 2 } });
    try {
      return await use(new DuckResultsSource(view));
    } finally {
      view.close();
    }
  });

const aggregated = async (events: readonly StoredEvent[], query: ResultsQuery): Promise<ResultsAggregates> => withSource(await storeOf(events), (source) => source.aggregate(query));

describe("DuckResultsSource", () => {
  it("gives the sums of the rules' plain formulation on 20 random event streams", async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const events = randomEvents(seed);
      const query = queryFor(seed, {
        until: new Date(T0 + (seed % 2 === 0 ? 500 : 600) * MINUTE_MS).toISOString(),
        metrics: [{ event: "buy" }, { event: "buy", windowMs: 90 * MINUTE_MS }, { event: "error" }],
        weighted: seed % 4 === 0,
      });
      const got = await aggregated(events, query);
      const want = reference(events, query);
      expect(byKey(got.allocations), `seed ${seed}`).toEqual(byKey(want.allocations));
      expect(got.unitsInSeveral, `seed ${seed}`).toBe(want.unitsInSeveral);
      expect(got.unitsWithoutPropensity, `seed ${seed}`).toBe(want.unitsWithoutPropensity);
      expect(got.hourly, `seed ${seed}`).toEqual(hourlyOf(want.exposed));
      got.metrics.forEach((sums, m) => {
        const expected = byKey(want.metrics[m]!);
        byKey(sums).forEach((s, i) => {
          const e = expected[i]!;
          expect({ key: s.allocationKey, units: s.units, conversions: s.conversions }, `seed ${seed} metric ${m}`).toEqual({ key: e.allocationKey, units: e.units, conversions: e.conversions });
          for (const field of ["w", "w2", "convertedW", "convertedW2", "wValue", "w2Value", "w2Value2"] as const) expect(s[field], `seed ${seed} ${field}`).toBeCloseTo(e[field], 9);
        });
      });
    }
  });
});

/** A capped metric, a windowed one on the same event, and another event: the extras' metrics. */
const CAPPED_METRICS = [{ event: "buy", cap: 0.8 }, { event: "buy", windowMs: 90 * MINUTE_MS }, { event: "view" }];

describe("DuckResultsSource's pre-period, caps and products", () => {
  it("gives the plain formulation's sums on 20 random event streams", async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const events = randomEvents(seed);
      const query = queryFor(seed, {
        until: new Date(T0 + 600 * MINUTE_MS).toISOString(),
        metrics: CAPPED_METRICS,
        weighted: false,
        preperiodMs: (seed % 2 === 0 ? 120 : 600) * MINUTE_MS,
        products: [{ of: [0, 2], kinds: ["value", "conversion"] }, { of: [1, 0], kinds: ["value", "value"] }],
      });
      const got = await aggregated(events, query);
      const plain = reference(events, query);
      const want = referenceExtras(events, query, plain.exposed);
      expect(got.caps ?? query.metrics.map(() => undefined), `seed ${seed}`).toEqual(want.caps);
      got.metrics.forEach((sums, m) => {
        const { post, pre } = want.perMetric[m]!;
        for (const s of sums) {
          const units = plain.exposed.filter((x) => x.alloc === s.allocationKey).map((x) => `${x.unit}\u0000${x.alloc}`);
          const xs = units.filter((u) => pre.has(u));
          const expected = {
            convertedBefore: xs.length,
            convertedBoth: xs.filter((u) => post.has(u)).length,
            x: xs.reduce((t, u) => t + pre.get(u)!, 0),
            x2: xs.reduce((t, u) => t + pre.get(u)! ** 2, 0),
            xy: xs.reduce((t, u) => t + pre.get(u)! * (post.get(u) ?? 0), 0),
          };
          const pv = s.preperiod!;
          expect({ before: pv.convertedBefore, both: pv.convertedBoth }, `seed ${seed} metric ${m}`).toEqual({ before: expected.convertedBefore, both: expected.convertedBoth });
          for (const f of ["x", "x2", "xy"] as const) expect(pv[f], `seed ${seed} metric ${m} ${f}`).toBeCloseTo(expected[f], 9);
          expect(s.wValue, `seed ${seed} metric ${m} capped`).toBeCloseTo(units.reduce((t, u) => t + (post.get(u) ?? 0), 0), 9);
        }
      });
      query.products!.forEach((p, i) => {
        for (const { allocationKey, sum } of got.products![i]!) {
          const units = plain.exposed.filter((x) => x.alloc === allocationKey).map((x) => `${x.unit}\u0000${x.alloc}`);
          const value = (m: number, kind: string, u: string) => (want.perMetric[m]!.post.has(u) ? (kind === "value" ? want.perMetric[m]!.post.get(u)! : 1) : 0);
          expect(sum, `seed ${seed} product ${i}`).toBeCloseTo(units.reduce((t, u) => t + value(p.of[0], p.kinds[0], u) * value(p.of[1], p.kinds[1], u), 0), 9);
        }
      });
    }
  });
});

describe("DuckResultsSource's looks", () => {
  it("gives at each look, in one read, the aggregates of a read with that --until", async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const events = randomEvents(seed);
      const query = queryFor(seed, {
        until: new Date(T0 + 600 * MINUTE_MS).toISOString(),
        metrics: CAPPED_METRICS,
        weighted: seed % 2 === 0,
        preperiodMs: 120 * MINUTE_MS,
        products: [{ of: [0, 2], kinds: ["value", "conversion"] }],
      });
      // Looks every 100 minutes from the first exposure's hour; one past --until is dropped.
      const times = (first: string) => Array.from({ length: 7 }, (_, i) => new Date(Math.floor(Date.parse(first) / 3_600_000) * 3_600_000 + (i + 1) * 100 * MINUTE_MS).toISOString());
      await withSource(await storeOf(events), async (source) => {
        const looks = await source.aggregateLooks(query, times);
        expect(looks.map((l) => l.at), `seed ${seed}`).toEqual([...times(looks[0]!.aggregates.firstExposure ?? query.until).filter((t) => t < query.until), query.until]);
        for (const { at, aggregates } of looks) {
          const alone = await source.aggregate({ ...query, until: at });
          expect(roundedDeep(aggregates), `seed ${seed} at ${at}`).toEqual(roundedDeep(alone));
        }
      });
    }
  });
});

/** Numbers to 9 significant digits: the looks' sums add per-look partial sums, in another order. */
function roundedDeep(value: unknown): unknown {
  if (typeof value === "number") return Number(value.toPrecision(9));
  if (Array.isArray(value)) return value.map(roundedDeep);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundedDeep(v)]));
  return value;
}
