// Two `vane serve --store postgres://…` processes on one database: the Parquet copy (whichever
// server holds its lease) asks the shared store when each env got its first bundle, so an env
// published by another process (the CLI here) gets its own folder for the events received from
// then on, with no restart, while its events received before and an env with no bundle go to
// their project's env=~unpublished.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { bundleFor, secret, tempDir } from "../cli/helpers.js";
import { serveProcess } from "../cli/serve-process.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { waitFor } from "../wait.js";

const ROOT = new URL("../../", import.meta.url);
const run = promisify(execFile);
const PK = secret("pk", "postgres-archive-envs");

let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.stop();
});

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ["bin/vane.js", ...args], { cwd: ROOT, timeout: 30_000 });
  return stdout;
}

function jsonFile(value: unknown): string {
  const file = join(tempDir(), "input.json");
  writeFileSync(file, JSON.stringify(value));
  return file;
}

describe("the archive's env folders on a shared PostgreSQL store", () => {
  it("gives an env the CLI publishes its own folder for the events received since, on servers it never spoke to", async () => {
    const url = await pg.createDatabase();
    await cli("import", jsonFile({ keys: [{ key: PK, orgId: "org-1", projectId: "shop", scopes: ["sdk:read", "sdk:write"] }], bundles: [bundleFor("shop", "2026-12-01T00:00:00Z")] }), "--store", url);
    const dataDirs = [tempDir(), tempDir()];
    const servers = await Promise.all(dataDirs.map((dataDir) => serveProcess(dataDir, ["--store", url, "--log-level", "silent"])));
    try {
      /** Each archived unit key's `env=…` folder, whichever server's copy wrote it. */
      const folders = async (): Promise<Map<string, string>> => {
        const files: string[] = [];
        for (const dataDir of dataDirs) {
          const sink = new NodeFileSink(join(dataDir, "parquet"));
          for (const path of await sink.list()) files.push(sqlString(sink.pathOf(path)));
        }
        if (files.length === 0) return new Map();
        const duck = await openDuck({ threads: 1 });
        try {
          const read = await duck.connection.runAndReadAll(`SELECT unit_key, filename FROM read_parquet([${files.join(", ")}], hive_partitioning = false, filename = true)`);
          return new Map(read.getRows().map(([unit, file]) => [unit as string, (file as string).split("/").find((part) => part.startsWith("env="))!]));
        } catch {
          return new Map(); // a file compacted away meanwhile: asked again
        } finally {
          duck.close();
        }
      };
      const send = async (server: number, unitKey: string, env: string) => {
        const response = await fetch(`${servers[server]!.url}/v1/events`, {
          method: "POST",
          headers: { Authorization: `Bearer ${PK}`, "Content-Type": "application/json" },
          body: JSON.stringify({ events: [{ type: "track", event: "buy", unitKey, timestamp: new Date().toISOString(), env }] }),
        });
        expect(await response.json()).toMatchObject({ accepted: 1 });
      };
      /** Waits until every unit is archived; each unit's folder. */
      const archived = async (...units: string[]): Promise<Map<string, string>> => {
        let found = new Map<string, string>();
        await waitFor(
          async () => {
            found = await folders();
            return units.every((unit) => found.has(unit));
          },
          `${units.join(", ")} archived`,
          { timeoutMs: 60_000, everyMs: 250 },
        );
        return found;
      };

      await send(0, "before", "staging");
      await send(1, "prod", "production");
      let found = await archived("before", "prod");
      expect([found.get("before"), found.get("prod")]).toEqual(["env=~unpublished", "env=production"]);

      await cli("bundles", "put", jsonFile(bundleFor("shop", "2026-12-01T00:00:00Z", "staging")), "--store", url);
      await send(0, "after-0", "staging");
      await send(1, "after-1", "staging");
      found = await archived("after-0", "after-1");
      expect([found.get("after-0"), found.get("after-1"), found.get("before")]).toEqual(["env=staging", "env=staging", "env=~unpublished"]);
    } finally {
      for (const server of servers) server.child.kill("SIGTERM");
      await Promise.all(servers.map((server) => server.exited));
    }
  }, 180_000);
});
