// An event's env is the sender's (any non-empty string), and the Parquet archive names a folder
// after it (env=<value>, %XX-escaped). A file system refuses a name over 255 bytes (ENAMETOOLONG),
// and one such event failed every delivery holding it: the archive (and `vane results`, which
// reads it) stopped there for every tenant, for good. Over real HTTP to `vane serve`, with the
// copy's own process: a long env, one whose escaped form is long, and events of another tenant
// after them all reach the archive.
import { describe, expect, it } from "vitest";
import { tempDir } from "../cli/helpers.js";
import { serveProcess } from "../cli/serve-process.js";
import { parquetRows } from "../store/parquet-files.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { join } from "node:path";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ADMIN = "admin-token-for-the-long-names-test-0123456789";

describe("the Parquet archive and long partition values", () => {
  it("archives events whose env makes a folder name over 255 bytes, and every event after them", async () => {
    const dataDir = tempDir();
    const served = await serveProcess(dataDir, ["--log-level", "silent", "--admin-token", ADMIN]);
    try {
      const post = async (path: string, key: string, body: unknown) => {
        const response = await fetch(served.url + path, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      // A second tenant, whose events come after the long ones.
      const bundle = { version: "2026-11-29T00:00:00Z", orgId: "other-org", projectId: "other", env: "production", hashing: { unitKey: "userId" }, parameters: [], layers: [] };
      expect((await post("/admin/v1/bundles", ADMIN, { bundle })).status).toBe(200);
      const other = await post("/admin/v1/keys", ADMIN, { orgId: "other-org", projectId: "other", scopes: ["sdk:write"] });
      const otherKey = other.body.secret as string;

      const track = (unitKey: string, env?: string) => ({ type: "track", unitKey, timestamp: new Date().toISOString(), event: "signup", ...(env !== undefined && { env }) });
      const long = "e".repeat(300);
      const escapedLong = "é".repeat(60); // 60 characters, 360 bytes once %XX-escaped
      // Published, so each has a folder of its own (an env without a bundle goes to the project's shared one).
      for (const env of [long, escapedLong]) expect((await post("/admin/v1/bundles", ADMIN, { bundle: { ...bundle, orgId: "demo-org", projectId: "demo", env } })).status).toBe(200);
      const first = await post("/v1/events", served.sk, { events: [track("long", long), track("escaped", escapedLong)] });
      expect(first.body).toMatchObject({ accepted: 2 });
      for (let i = 0; i < 3; i++) expect((await post("/v1/events", otherKey, { events: [track(`after-${i}`)] })).body).toMatchObject({ accepted: 1 });

      let rows: Record<string, unknown>[] = [];
      for (let waited = 0; rows.length < 5 && waited < 60_000; waited += 200) {
        await sleep(200);
        rows = (await parquetRows(dataDir)).filter((row) => row.type === "track");
      }
      // The body's env: a reader with Hive partitioning on (as parquetRows reads) takes a long
      // value's folder name (its start and a hash) for the env column; Vane's readers have it off.
      const envOf = (row: Record<string, unknown>) => (JSON.parse(row.body as string) as { env: string }).env;
      expect(rows.map((row) => [row.unit_key, row.org_id, envOf(row)]).sort()).toEqual([
        ["after-0", "other-org", "production"],
        ["after-1", "other-org", "production"],
        ["after-2", "other-org", "production"],
        ["escaped", "demo-org", escapedLong],
        ["long", "demo-org", long],
      ]);
      // Each env keeps a folder of its own, every name within the file system's 255 bytes.
      const files = await new NodeFileSink(join(dataDir, "parquet")).list();
      const envFolders = new Set(files.map((file) => file.split("/")[3]!));
      expect(envFolders.size).toBe(3);
      for (const file of files) for (const name of file.split("/")) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
    }
  }, 90_000);
});
