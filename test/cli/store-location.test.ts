// Hints name the store the server uses, and --data for a folder no running server uses says so
// (issue 32 item 3; the rule is in src/cli/data-folder.ts): `vane serve --store URL` on a real
// PostgreSQL prints where its data is and a `keys create` with --store that works as printed;
// the same verb pointed at that server's --data folder is refused; a verb that writes into a
// folder without vane.db says it makes a new store there.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { laterStartText } from "../../src/cli/first-run.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { tempDir, vane } from "./helpers.js";
import { serveProcess } from "./serve-process.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PASSWORD = "s3cret";
const NEW_STORE = /^note: (.+) had no vane\.db, so this makes a new store there, which no running server uses/;

describe("a verb that writes into a folder without vane.db", () => {
  it("says it makes a new store there, and says nothing once the folder has one", async () => {
    const data = join(tempDir(), "typo");
    const first = await vane("keys", "create", "--org", "acme", "--scopes", "sdk:read", "--data", data);
    expect(first.code).toBe(0);
    expect(NEW_STORE.exec(first.err)?.[1]).toBe(resolve(data));
    expect(existsSync(join(data, "vane.db"))).toBe(true);
    const second = await vane("keys", "create", "--org", "acme", "--scopes", "sdk:read", "--data", data);
    expect(second).toMatchObject({ code: 0, err: "" });
  });
});

describe("the banner's hints on a shared store", () => {
  it("name the store with --store, its password hidden, and never a --data folder", () => {
    const text = laterStartText(
      { version: "0.1.0", url: "http://127.0.0.1:8787", where: { data: "/srv/vane", store: `postgres://vane:${PASSWORD}@db:5432/vane` }, now: 0 },
      { bundles: [], keys: [] },
    );
    expect(text).toContain("Store: postgres://vane:***@db:5432/vane (keys, bundles, events)\nData folder: /srv/vane\n");
    expect(text).toContain("  npx vane bundles put FILE --store 'postgres://vane:***@db:5432/vane'\n");
    expect(text).toContain("  npx vane keys create --org ORG --scopes SCOPES --store 'postgres://vane:***@db:5432/vane'\n");
    expect(text).toContain("(*** stands for the store's password: put it there, or set VANE_STORE and leave --store out)");
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain("--data");
  });
});

describe("vane serve --store postgres://…", () => {
  let pg: PostgresService;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.stop();
  });

  it("prints the store and a keys create that reaches it; the server's --data folder is refused without --store", async () => {
    const url = (await pg.createDatabase()).replace("postgres://vane@", `postgres://vane:${PASSWORD}@`);
    const shown = url.replace(`:${PASSWORD}@`, ":***@");
    const data = tempDir();
    const server = await serveProcess(data, ["--store", url]);
    const banner = server.stdout();
    expect(banner).toContain(`Store: ${shown} (keys, bundles, events)\nData folder: ${resolve(data)}\n`);
    expect(banner).not.toContain("Data folder: postgres");
    expect(banner).not.toContain(PASSWORD);
    const hint = banner.split("\n").map((line) => line.trim()).find((line) => line.startsWith("npx vane keys create"));
    expect(hint).toBe(`npx vane keys create --org demo-org --project demo --scopes sdk:read,sdk:write --kind sk --store '${shown}'`);

    // As printed, with the password where *** stands: the key is in the server's store.
    const { stdout } = await promisify(execFile)("sh", ["-c", hint!.replace(":***@", `:${PASSWORD}@`)], { cwd: ROOT });
    const secret = /^ {2}(vane_sk_\S+)$/m.exec(stdout)?.[1];
    const config = await fetch(`${server.url}/v1/config/demo`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(config.status).toBe(200);

    // The server's folder, without --store: refused, naming the store.
    for (const argv of [["keys", "create", "--org", "demo-org", "--project", "demo", "--scopes", "sdk:read"], ["keys", "list"], ["bundles", "list"]]) {
      const run = await vane(...argv, "--data", data);
      expect(run.code).toBe(1);
      expect(run.err).toContain(`${resolve(data)} is the data folder of a server on the shared store ${shown} (see shared-store.json there): its keys and bundles are in that store, not in this folder; pass --store ${shown} (its password where *** stands) or set VANE_STORE`);
    }
    expect(existsSync(join(data, "vane.db"))).toBe(false);
    expect((await vane("keys", "list", "--data", data, "--store", url)).out).toContain("demo-org");

    // And a server started on it without --store would serve an empty SQLite store: refused too.
    const sqlite = await vane("serve", "--port", "0", "--data", data);
    expect(sqlite.code).toBe(1);
    expect(sqlite.err).toContain("is the data folder of a server on the shared store");
    server.child.kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
  });
});
