// The archive's env folders (partitions.ts): an env with a bundle has its own, every other env of a
// project shares UNPUBLISHED_ENVS's, one a day, each row keeping its env. The name no escaped env
// can take; the copy's three ways of writing (one COPY from the text, the staged table, the
// appender) file alike; compaction and the sweep's rewrite work on the shared folder as on any.
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
const SHOP = publishedEnvs([{ orgId: "org-1", projectId: "shop", env: "production" }]);

/** A track event as the server stores it: its body repeats the envelope (a compact log row). */
function track(id: string, env: string, tenant: { orgId: string; projectId: string } = { orgId: "org-1", projectId: "shop" }): StoredEvent {
  const body = { type: "track", event: "buy", unitKey: `u-${id}`, timestamp: RECEIVED_AT, ...tenant, env };
  return { id, receivedAt: RECEIVED_AT, ...tenant, env, type: "track", unitKey: body.unitKey, timestamp: RECEIVED_AT, name: "buy", body };
}

const envFolder = (folder: string): string => folder.split("/")[3]!;

describe("the env folder of an archived event", () => {
  it("is the env's own when its org, project and env have a bundle, the project's shared one a day otherwise", () => {
    const published = publishedEnvs([
      { orgId: "org-1", projectId: "shop", env: "production" },
      { orgId: "org-1", projectId: "shop", env: "staging eu" },
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

  it("has a file the sweep finds not whole written again with its events, and refuses when an env of them was published since", async () => {
    let published = SHOP;
    const copy = await copyOf("text", () => published);
    try {
      await copy.stores.events.append([track("y-1", "y"), track("p-1", "production"), track("x-1", "x")]);
      await copy.pipeline().catchUp();
      const [shared] = (await copy.sink.list()).filter((file) => holdsUnpublished(file));
      expect(shared).toMatch(/part-000000000001-000000000003\.parquet$/);
      const before = await archivedRows(copy.sink);

      truncateSync(copy.sink.pathOf(shared!), 100);
      await copy.pipeline().catchUp(); // a new copy sweeps first
      expect(await archivedRows(copy.sink)).toEqual(before);

      // x's bundle published since: a rewrite would leave x's event (the last) out, so it is refused.
      truncateSync(copy.sink.pathOf(shared!), 100);
      published = publishedEnvs([{ orgId: "org-1", projectId: "shop", env: "production" }, { orgId: "org-1", projectId: "shop", env: "x" }]);
      await expect(copy.pipeline().catchUp()).rejects.toThrow(/not whole.*an env of theirs was published since/);
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
