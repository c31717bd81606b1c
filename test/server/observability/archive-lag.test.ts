// /metrics' archive lag: how many events, and how old the oldest, the Parquet archive does not
// hold yet, read from the store at each scrape; NaN when the store cannot be read.
import { afterEach, describe, expect, it } from "vitest";
import { PrometheusMetrics } from "../../../src/server/observability/prometheus.js";
import { openSqliteStores, type SqliteStores } from "../../../src/store/sqlite/index.js";
import type { EventStore } from "../../../src/store/types.js";
import { makeBatch } from "../../store/fixtures.js";
import { tempDir } from "../../cli/helpers.js";

const open: SqliteStores[] = [];
afterEach(async () => {
  for (const stores of open.splice(0)) await stores.close();
});

async function gauge(metrics: PrometheusMetrics, name: string): Promise<number> {
  const values = await metrics.registry.getSingleMetric(name)!.get();
  return values.values[0]!.value;
}

describe("vane_archive_lag_events and _seconds", () => {
  it("count the events past the copy's checkpoint and the age of the oldest, 0 once archived", async () => {
    const stores = openSqliteStores({ dataDir: tempDir() });
    open.push(stores);
    const metrics = new PrometheusMetrics();
    metrics.watchArchive(stores.events);
    expect([await gauge(metrics, "vane_archive_lag_events"), await gauge(metrics, "vane_archive_lag_seconds")]).toEqual([0, 0]);

    const received = new Date(Date.now() - 90_000).toISOString();
    await stores.events.append(makeBatch("old", 3, { receivedAt: received }));
    await stores.events.append(makeBatch("new", 4, { receivedAt: new Date().toISOString() }));
    expect(await gauge(metrics, "vane_archive_lag_events")).toBe(7);
    expect(await gauge(metrics, "vane_archive_lag_seconds")).toBeGreaterThanOrEqual(90);

    await stores.events.setCheckpoint("parquet", 3);
    expect(await gauge(metrics, "vane_archive_lag_events")).toBe(4);
    expect(await gauge(metrics, "vane_archive_lag_seconds")).toBeLessThan(90);
    await stores.events.setCheckpoint("parquet", 7);
    expect([await gauge(metrics, "vane_archive_lag_events"), await gauge(metrics, "vane_archive_lag_seconds")]).toEqual([0, 0]);
  });

  it("are NaN while the store cannot be read, and the scrape still answers", async () => {
    const failing = { append: () => Promise.reject(new Error("down")), checkpoint: () => Promise.reject(new Error("down")) } as unknown as EventStore;
    const metrics = new PrometheusMetrics();
    metrics.watchArchive(failing);
    expect(await gauge(metrics, "vane_archive_lag_events")).toBeNaN();
    expect(await gauge(metrics, "vane_archive_lag_seconds")).toBeNaN();
    expect((await metrics.scrape()).body).toMatch(/^vane_archive_lag_seconds Nan$/m);
  });
});
