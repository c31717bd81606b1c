// The archive's env folders (partitions.ts): an event received since its env's first bundle goes
// to the env's own folder, every other event of a project to UNPUBLISHED_ENVS's, one a day, each
// row keeping its env. The name no escaped env can take; the copy's three ways of writing (one
// COPY from the text, the staged table, the appender) file alike, a delivery received around a
// first bundle too; compaction and the sweep's rewrite work on the shared folder as on any, and a
// rewrite after a publication files as the first write did.
import { truncateSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { folderSpan } from "../../src/store/parquet/archive-retention.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { EVERY_ENV, UNPUBLISHED_ENVS, type PublishedEnvs, archivePath, holdsUnpublished, partitionFolder, publishedEnvs } from "../../src/store/parquet/partitions.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { StoredEvent } from "../../src/store/types.js";
import { tempDirs } from "./fixtures.js";

const tempDir = tempDirs("vane-archive-envs-");
const DAY = Date.parse("2026-11-29T10:00:00Z");
const RECEIVED_AT = "2026-11-29T10:00:00.000Z";
/** A first bundle stored before the events, which RECEIVED_AT received. */
const EARLIER = "2026-11-28T09:00:00.000Z";
const SHOP = publishedEnvs([{ orgId: "org-1", projectId: "shop", env: "production", storedAt: EARLIER }]);

/** A track event as the server stores it: its body repeats the envelope (a compact log row). */
function track(id: string, env: string, tenant: { orgId: string; projectId: string } = { orgId: "org-1", projectId: "shop" }, receivedAt = RECEIVED_AT): StoredEvent {
  const body = { type: "track", event: "buy", unitKey: `u-${id}`, timestamp: receivedAt, ...tenant, env };
  return { id, receivedAt, ...tenant, env, type: "track", unitKey: body.unitKey, timestamp: receivedAt, name: "buy", body };
}

const envFolder = (folder: string): string => folder.split("/")[3]!;

describe("the env folder of an archived event", () => {
  it("is the env's own when its org, project and env have a bundle, the project's shared one a day otherwise", () => {
    const published = publishedEnvs([
      { orgId: "org-1", projectId: "shop", env: "production", storedAt: EARLIER },
      { orgId: "org-1", projectId: "shop", env: "staging eu", storedAt: EARLIER },
    ]);
    const folder = (orgId: string, projectId: string, env: string, millis = DAY) => partitionFolder({ orgId, projectId, env }, millis, published);
    expect(folder("org-1", "shop", "production")).toBe("events/org=org-1/project=shop/env=production/day=2026-11-29");
    expect(folder("org-1", "shop", "staging eu")).toBe("events/org=org-1/project=shop/env=staging%20eu/day=2026-11-29");
    expect(folder("org-1", "shop", "made-up")).toBe(`events/org=org-1/project=shop/env=${UNPUBLISHED_ENVS}/day=2026-11-29`);
    expect(folder("org-1", "shop", "made-up-2")).toBe(folder("org-1", "shop", "made-up"));
    // Another project, org or day: another shared folder; the key is all three, not the env alone.
    expect(folder("org-1", "cart", "production")).toBe(`events/org=org-1/project=cart/env=${UNPUBLISHED_ENVS}/day=2026-11-29`);
    expect(folder("org-2", "shop", "production")).toBe(`events/org=org-2/project=shop/env=${UNPUBLISHED_ENVS}/day=2026-11-29`);
    expect(folder("org-1", "shop", "made-up", DAY + 86_400_000)).toBe(`events/org=org-1/project=shop/env=${UNPUBLISHED_ENVS}/day=2026-11-30`);
    expect(holdsUnpublished(folder("org-1", "shop", "made-up"))).toBe(true);
    expect(holdsUnpublished(folder("org-1", "shop", "production"))).toBe(false);
  });

  it("is the env's own for an event received at or after its env's first bundle, the shared one before, compared as times", () => {
    // Written with an offset: as text it sorts after the events below, as a time it is 10:00:00.000Z.
    const published = publishedEnvs([{ orgId: "org-1", projectId: "shop", env: "production", storedAt: "2026-11-29T11:00:00+01:00" }]);
    const folder = (receivedAt: string) => envFolder(partitionFolder({ orgId: "org-1", projectId: "shop", env: "production" }, Date.parse(receivedAt), published));
    expect(folder("2026-11-29T09:59:59.999Z")).toBe(`env=${UNPUBLISHED_ENVS}`);
    expect(folder("2026-11-29T10:00:00.000Z")).toBe("env=production");
    expect(folder("2026-11-29T10:00:00.001Z")).toBe("env=production");
    expect(() => publishedEnvs([{ orgId: "o", projectId: "p", env: "e", storedAt: "yesterday" }])).toThrow(/invalid storedAt/);
  });

  it("is a name no escaped env takes, that the sink, the archive's listing and retention's day read as any folder", () => {
    const envs = [
      UNPUBLISHED_ENVS,
      "~",
      `%7E${UNPUBLISHED_ENVS.slice(1)}`,
      "",
      ".hidden",
      "unpublished",
      "~".repeat(300), // escaped past the length bound: its start and a hash
      `${UNPUBLISHED_ENVS}${"x".repeat(250)}`,
      ...Array.from({ length: 0x80 }, (_, code) => `${String.fromCharCode(code)}unpublished`),
      "é~日本😀",
    ];
    for (const env of envs) {
      const own = envFolder(partitionFolder({ orgId: "o", projectId: "p", env }, DAY, EVERY_ENV));
      expect(own, JSON.stringify(env)).not.toBe(`env=${UNPUBLISHED_ENVS}`);
      expect(own, JSON.stringify(env)).not.toContain("~");
    }
    const shared = partitionFolder({ orgId: "o", projectId: "p", env: "any" }, DAY, publishedEnvs([]));
    expect(UNPUBLISHED_ENVS.startsWith(".")).toBe(false);
    const file = `${shared}/part-000000000001-000000000009.parquet`;
    expect(() => new NodeFileSink(tempDir()).pathOf(file)).not.toThrow();
    expect(archivePath(file)).toEqual({ path: file, folder: shared, first: 1, last: 9 });
    expect(folderSpan(shared)).toEqual({ startMs: Date.parse("2026-11-29T00:00:00Z"), endMs: Date.parse("2026-11-30T00:00:00Z") });
  });
});

/** Every archived row, read as Vane reads them (Hive partitioning off), with its file's env folder. */
async function archivedRows(sink: NodeFileSink): Promise<{ id: string; env: string; folder: string }[]> {
  const files = await sink.list();
  if (files.length === 0) return [];
  const duck = await openDuck({ threads: 1 });
  try {
    const read = await duck.connection.runAndReadAll(
      `SELECT id, env, filename FROM read_parquet([${files.map((path) => sqlString(sink.pathOf(path))).join(", ")}], hive_partitioning = false, filename = true) ORDER BY seq`,
    );
    return read.getRows().map(([id, env, file]) => ({ id: id as string, env: env as string, folder: (file as string).split("/").find((part) => part.startsWith("env="))! }));
  } finally {
    duck.close();
  }
}

/** A store, its sink and a copy writing by `path`, the envs with a bundle asked through `published`. */
async function copyOf(path: "text" | "appender", published: () => PublishedEnvs) {
  const dataDir = tempDir();
  const stores = openSqliteStores({ dataDir });
  const sink = new NodeFileSink(`${dataDir}/parquet`);
  const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
  const pipeline = () =>
    new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, writeDelivery: path === "text" ? writer.writeDelivery : undefined, intact: writer.intact, published: async () => published() });
  const close = async () => {
    writer.close();
    await stores.close();
  };
  return { stores, sink, writer, pipeline, close };
}

describe.each(["text", "appender"] as const)("the copy, writing by the %s path", (path) => {
  it("files a delivery's unpublished envs in one folder, its published env in its own, every row with its env", async () => {
    const copy = await copyOf(path, () => SHOP);
    try {
      const pipeline = copy.pipeline();
      // One unpublished env alone (one COPY from the text), then many mixed (the staged table).
      await copy.stores.events.append([track("alone", "made-up")]);
      await pipeline.catchUp();
      const mixed = [
        track("prod-1", "production"),
        ...Array.from({ length: 40 }, (_, i) => track(`env-${i}`, `env-${i}`)),
        track("prod-2", "production"),
        track("other", "production", { orgId: "org-2", projectId: "cart" }), // org-2's production has no bundle here
      ];
      await copy.stores.events.append(mixed);
      await pipeline.catchUp();

      const files = await copy.sink.list();
      expect(files.map((file) => archivePath(file)!.folder).sort()).toEqual([
        "events/org=org-1/project=shop/env=production/day=2026-11-29",
        `events/org=org-1/project=shop/env=${UNPUBLISHED_ENVS}/day=2026-11-29`,
        `events/org=org-1/project=shop/env=${UNPUBLISHED_ENVS}/day=2026-11-29`, // one file a delivery
        `events/org=org-2/project=cart/env=${UNPUBLISHED_ENVS}/day=2026-11-29`,
      ]);
      const rows = await archivedRows(copy.sink);
      expect(rows.map((row) => [row.id, row.env])).toEqual([track("alone", "made-up"), ...mixed].map((event) => [event.id, event.env]));
      expect(rows.filter((row) => row.folder === "env=production").map((row) => row.id)).toEqual(["prod-1", "prod-2"]);
    } finally {
      await copy.close();
    }
  });
});

describe.each(["text", "appender"] as const)("the copy, writing by the %s path, run after an env's first bundle", (path) => {
  const SHOP_ORG = { orgId: "org-1", projectId: "shop" };
  const BEFORE = "2026-11-29T09:59:59.999Z";
  const AFTER = "2026-11-29T10:00:01.000Z";

  it("files each event by its receive time against that bundle: those received before it in the shared folder", async () => {
    // production's first bundle at RECEIVED_AT; every delivery runs after it.
    const published = publishedEnvs([{ ...SHOP_ORG, env: "production", storedAt: RECEIVED_AT }]);
    const copy = await copyOf(path, () => published);
    try {
      const pipeline = copy.pipeline();
      // production alone, one log row received before its bundle, one at it (one COPY from the text can name no single folder).
      await copy.stores.events.append([track("p-before", "production", SHOP_ORG, BEFORE)]);
      await copy.stores.events.append([track("p-at", "production", SHOP_ORG, RECEIVED_AT)]);
      await pipeline.catchUp();
      // Mixed, in one log row: before, another env, after, before.
      await copy.stores.events.append([
        track("p-before-2", "production", SHOP_ORG, BEFORE),
        track("made-up", "made-up", SHOP_ORG, AFTER),
        track("p-after", "production", SHOP_ORG, AFTER),
        track("p-before-3", "production", SHOP_ORG, BEFORE),
      ]);
      await pipeline.catchUp();

      expect((await copy.sink.list()).sort()).toEqual([
        "events/org=org-1/project=shop/env=production/day=2026-11-29/part-000000000002-000000000002.parquet",
        "events/org=org-1/project=shop/env=production/day=2026-11-29/part-000000000005-000000000005.parquet",
        `events/org=org-1/project=shop/env=${UNPUBLISHED_ENVS}/day=2026-11-29/part-000000000001-000000000001.parquet`,
        `events/org=org-1/project=shop/env=${UNPUBLISHED_ENVS}/day=2026-11-29/part-000000000003-000000000006.parquet`,
      ]);
      const folders = new Map((await archivedRows(copy.sink)).map((row) => [row.id, row.folder]));
      expect(Object.fromEntries(folders)).toEqual({
        "p-before": `env=${UNPUBLISHED_ENVS}`,
        "p-at": "env=production",
        "p-before-2": `env=${UNPUBLISHED_ENVS}`,
        "made-up": `env=${UNPUBLISHED_ENVS}`,
        "p-after": "env=production",
        "p-before-3": `env=${UNPUBLISHED_ENVS}`,
      });
      expect(await archivedRows(copy.sink)).toHaveLength(6); // each once
    } finally {
      await copy.close();
    }
  });
});

describe("the shared folder", () => {
  it("is compacted as any folder is", async () => {
    const copy = await copyOf("text", () => SHOP);
    try {
      const pipeline = copy.pipeline();
      for (let delivery = 0; delivery < 8; delivery++) {
        await copy.stores.events.append([track(`a-${delivery}`, `a-${delivery}`), track(`b-${delivery}`, `b-${delivery}`)]);
        await pipeline.catchUp();
      }
      expect(await copy.sink.list()).toHaveLength(8);
      expect(await copy.writer.compact(16)).toBe(1);
      expect(await copy.sink.list()).toEqual([`events/org=org-1/project=shop/env=${UNPUBLISHED_ENVS}/day=2026-11-29/part-000000000001-000000000016.parquet`]);
      expect((await archivedRows(copy.sink)).map((row) => row.env).sort()).toEqual(Array.from({ length: 8 }, (_, i) => [`a-${i}`, `b-${i}`]).flat().sort());
    } finally {
      await copy.close();
    }
  });

  it("has a file the sweep finds not whole written again with its events, an env of them published since or not", async () => {
    let published = SHOP;
    const copy = await copyOf("text", () => published);
    try {
      await copy.stores.events.append([track("y-1", "y"), track("p-1", "production"), track("x-1", "x")]);
      await copy.pipeline().catchUp();
      const [shared] = (await copy.sink.list()).filter((file) => holdsUnpublished(archivePath(file)!.folder));
      expect(shared).toMatch(/part-000000000001-000000000003\.parquet$/);
      const before = await archivedRows(copy.sink);

      truncateSync(copy.sink.pathOf(shared!), 100);
      await copy.pipeline().catchUp(); // a new copy sweeps first
      expect(await archivedRows(copy.sink)).toEqual(before);

      // x's first bundle published since its event was received: that event stays the shared file's.
      truncateSync(copy.sink.pathOf(shared!), 100);
      published = publishedEnvs([
        { orgId: "org-1", projectId: "shop", env: "production", storedAt: EARLIER },
        { orgId: "org-1", projectId: "shop", env: "x", storedAt: "2026-11-29T10:00:00.001Z" },
      ]);
      await copy.pipeline().catchUp();
      expect(await archivedRows(copy.sink)).toEqual(before);
    } finally {
      await copy.close();
    }
  });

  it("has an env's own file the sweep finds not whole written again with its events received since the env's first bundle alone", async () => {
    const copy = await copyOf("text", () => publishedEnvs([{ orgId: "org-1", projectId: "shop", env: "production", storedAt: RECEIVED_AT }]));
    try {
      // Received out of seq order around the bundle: the own file's seq range holds the shared file's event.
      const shop = { orgId: "org-1", projectId: "shop" };
      await copy.stores.events.append([track("after-1", "production", shop, "2026-11-29T10:00:01.000Z")]);
      await copy.stores.events.append([track("before", "production", shop, "2026-11-29T09:59:59.000Z")]);
      await copy.stores.events.append([track("after-2", "production", shop, "2026-11-29T10:00:02.000Z")]);
      await copy.pipeline().catchUp();
      const [own] = (await copy.sink.list()).filter((file) => file.includes("/env=production/"));
      expect(own).toMatch(/part-000000000001-000000000003\.parquet$/);
      const before = await archivedRows(copy.sink);
      truncateSync(copy.sink.pathOf(own!), 100);
      await copy.pipeline().catchUp();
      expect(await archivedRows(copy.sink)).toEqual(before);
      expect(before.map((row) => row.id).sort()).toEqual(["after-1", "after-2", "before"]);
    } finally {
      await copy.close();
    }
  });

  it("leaves an env's own folder to its env's events in a rewrite, as a copy before the shared folder wrote it", async () => {
    let published = EVERY_ENV;
    const copy = await copyOf("text", () => published);
    try {
      await copy.stores.events.append([track("y-1", "y"), track("p-1", "production"), track("y-2", "y")]);
      await copy.pipeline().catchUp();
      const [own] = (await copy.sink.list()).filter((file) => file.includes("/env=y/"));
      const before = await archivedRows(copy.sink);
      truncateSync(copy.sink.pathOf(own!), 100);
      published = SHOP; // y has no bundle: its new events go to the shared folder, its old file stays its own
      await copy.pipeline().catchUp();
      expect(await archivedRows(copy.sink)).toEqual(before);
    } finally {
      await copy.close();
    }
  });
});
