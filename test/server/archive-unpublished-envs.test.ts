// An event's env is the sender's free choice, and the Parquet archive named a folder after each:
// five requests of 1,000 events, each with an env of its own, made 5,000 files, and a normal event
// then took 115 s to reach the archive. An env has its own folder for the events received since
// its project's first bundle for it; the others share one folder per project and day
// (env=~unpublished), their rows keeping their env. Over real HTTP to `vane serve`, with the copy's own process.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { tempDir } from "../cli/helpers.js";
import { serveProcess } from "../cli/serve-process.js";

const ADMIN = "admin-token-for-the-unpublished-envs-test-0123456789";
const MADE_UP = 250;

interface ArchivedRow {
  readonly unit: string;
  readonly env: string;
  /** The file's `env=…` folder. */
  readonly folder: string;
}

/** Every archived track event, read as Vane reads the files: Hive partitioning off, so `env` is the row's own. */
async function archived(dataDir: string): Promise<ArchivedRow[]> {
  const sink = new NodeFileSink(join(dataDir, "parquet"));
  const files = (await sink.list()).map((path) => sqlString(sink.pathOf(path)));
  if (files.length === 0) return [];
  const duck = await openDuck({ threads: 1, memoryBytes: 256 * 1024 * 1024 });
  try {
    const read = await duck.connection.runAndReadAll(
      `SELECT unit_key, env, filename FROM read_parquet([${files.join(", ")}], hive_partitioning = false, filename = true) WHERE type = 'track'`,
    );
    return read.getRows().map(([unit, env, file]) => ({ unit: unit as string, env: env as string, folder: (file as string).split("/").find((part) => part.startsWith("env="))! }));
  } finally {
    duck.close();
  }
}

describe("the Parquet archive and envs without a bundle", () => {
  it("archives a project's unpublished envs under one folder a day, rows keeping their env, and a newly published env under its own", async () => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--log-level", "silent", "--admin-token", ADMIN]);
    try {
      const request = async (path: string, key: string, body?: unknown) => {
        const init = body === undefined ? {} : { method: "POST", body: JSON.stringify(body) };
        const response = await fetch(served.url + path, { ...init, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" } });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      const track = (unitKey: string, env?: string) => ({ type: "track", unitKey, timestamp: new Date().toISOString(), event: "signup", ...(env !== undefined && { env }) });
      const waitFor = async (units: readonly string[]): Promise<ArchivedRow[]> => {
        let rows: ArchivedRow[] = [];
        for (let waited = 0; waited < 60_000; waited += 200) {
          rows = await archived(dataDir);
          if (units.every((unit) => rows.some((row) => row.unit === unit))) return rows;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        throw new Error(`not archived within 60 s: ${units.filter((unit) => !rows.some((row) => row.unit === unit)).join(", ")}`);
      };

      // As the attack sent them: a publishable key, every event an env of its own.
      const madeUp = Array.from({ length: MADE_UP }, (_, i) => track(`made-up-${i}`, `env-${i}`));
      expect((await request("/v1/events", served.pk, { events: madeUp })).body).toMatchObject({ accepted: MADE_UP });
      expect((await request("/v1/events", served.pk, { events: [track("normal")] })).body).toMatchObject({ accepted: 1 });
      let rows = await waitFor([...madeUp.map((event) => event.unitKey), "normal"]);

      // The demo project's published env (production) has its folder; the 250 others share one.
      const folderOf = (unit: string) => rows.find((row) => row.unit === unit)!.folder;
      expect(folderOf("normal")).toBe("env=production");
      expect(new Set(madeUp.map((event) => folderOf(event.unitKey)))).toEqual(new Set(["env=~unpublished"]));
      const files = await new NodeFileSink(join(dataDir, "parquet")).list();
      const unpublishedFolders = new Set(files.filter((file) => file.includes("/env=~unpublished/")).map((file) => file.split("/").slice(0, -1).join("/")));
      const days = new Set(files.map((file) => file.split("/")[4]));
      expect(unpublishedFolders.size).toBeLessThanOrEqual(days.size); // one a day (a run across midnight makes two)
      // Each row keeps its env, for Vane's readers (Hive partitioning off) and the admin API's reads over the files.
      expect(rows.filter((row) => row.unit.startsWith("made-up-")).map((row) => [row.unit, row.env]).sort()).toEqual(madeUp.map((event) => [event.unitKey, event.env]).sort());
      const read = await request(`/admin/v1/events?project=demo&type=track&limit=1000`, ADMIN);
      const envs = new Map((read.body.events as { event: { unitKey: string; env: string } }[]).map(({ event }) => [event.unitKey, event.env]));
      expect(envs.get("made-up-7")).toBe("env-7");
      expect(envs.get("normal")).toBe("production");

      // A bundle for env-7: the events received from then on get their own folder, with no restart.
      const bundle = { version: "2026-11-29T00:00:00Z", orgId: "demo-org", projectId: "demo", env: "env-7", hashing: { unitKey: "userId" }, parameters: [], layers: [] };
      expect((await request("/admin/v1/bundles", ADMIN, { bundle })).status).toBe(200);
      expect((await request("/v1/events", served.pk, { events: [track("published-7", "env-7"), track("still-made-up", "env-8")] })).body).toMatchObject({ accepted: 2 });
      rows = await waitFor(["published-7", "still-made-up"]);
      expect(folderOf("published-7")).toBe("env=env-7");
      expect(folderOf("still-made-up")).toBe("env=~unpublished");
      expect(folderOf("made-up-7")).toBe("env=~unpublished"); // received before the publication: where it was
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
    }
  }, 120_000);
});
