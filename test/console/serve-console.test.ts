// `vane serve --console` as a user runs it (bin/vane.js on the built dist/): the banner prints the
// console's URL, the sign-in page loads the built files, the admin token signs in; without
// --console there is no console.
import { get } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { serveProcess } from "../cli/serve-process.js";
import { tempDir } from "../cli/helpers.js";

const ADMIN = "console-admin-token-0123456789abcdef0123456789";
let stop: (() => void) | undefined;
afterEach(() => stop?.());

describe("vane serve --console", () => {
  it("prints the console URL, serves the built pages and signs in with the admin token", async () => {
    const served = await serveProcess(tempDir(), ["--console", "--admin-token", ADMIN]);
    stop = () => served.child.kill("SIGTERM");
    const printed = /Console: (\S+) \(sign in with the admin token or an API key with the console:read scope\)/.exec(served.stdout())?.[1];
    expect(printed).toBe(`${served.url}/console`);
    const page = await fetch(`${served.url}/console/sign-in`);
    const script = /src="(\/console\/assets\/app-[\w]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    expect((await fetch(served.url + script)).status).toBe(200);
    const session = await fetch(`${served.url}/console/session`, { method: "POST", headers: { "Content-Type": "application/json", Origin: served.url }, body: JSON.stringify({ token: ADMIN }) });
    expect(session.status).toBe(200);
    const cookie = session.headers.get("Set-Cookie")!.split(";")[0]!;
    const projects = (await (await fetch(`${served.url}/console/api/projects`, { headers: { Cookie: cookie } })).json()) as { bundles: { projectId: string }[] };
    expect(projects.bundles.map((b) => b.projectId)).toEqual(["demo"]);
    // Results come from the data folder's SQLite store, which this host hands the console.
    const results = await fetch(`${served.url}/console/api/projects/demo/production/policies/checkout-test/results?metric=purchase`, { headers: { Cookie: cookie } });
    expect(((await results.json()) as { results: { allocations: { allocationKey: string }[] } }).results.allocations.map((a) => a.allocationKey)).toEqual(["control", "treatment"]);
  });

  it("prints a console:read key for the demo on a first run, which signs in", async () => {
    const served = await serveProcess(tempDir(), ["--console"]);
    stop = () => served.child.kill("SIGTERM");
    expect(served.stdout()).toMatch(/Console: \S+\/console \(sign in with an API key with the console:read scope/);
    const key = /Console key for the demo \(console:read, org demo-org; shown once\): (vane_sk_\w+)/.exec(served.stdout())?.[1];
    expect(key).toBeDefined();
    const session = await fetch(`${served.url}/console/session`, { method: "POST", headers: { "Content-Type": "application/json", Origin: served.url }, body: JSON.stringify({ token: key }) });
    expect(await session.json()).toMatchObject({ orgId: "demo-org" });
  });

  it("holds a session whichever of --workers 2 answers (they share the session secret)", async () => {
    const served = await serveProcess(tempDir(), ["--console", "--admin-token", ADMIN, "--workers", "2"]);
    stop = () => served.child.kill("SIGTERM");
    const session = await fetch(`${served.url}/console/session`, { method: "POST", headers: { "Content-Type": "application/json", Origin: served.url }, body: JSON.stringify({ token: ADMIN }) });
    const cookie = session.headers.get("Set-Cookie")!.split(";")[0]!;
    // A new connection each time: the primary hands connections to the workers in turn.
    const status = () =>
      new Promise<number>((done, fail) => get(`${served.url}/console/api/session`, { agent: false, headers: { Cookie: cookie } }, (res) => done(res.resume().statusCode!)).on("error", fail));
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push(await status());
    expect(statuses).toEqual(Array(8).fill(200));
  });

  it("is off without --console", async () => {
    const served = await serveProcess(tempDir(), ["--admin-token", ADMIN]);
    stop = () => served.child.kill("SIGTERM");
    expect(served.stdout()).not.toContain("Console:");
    expect((await fetch(`${served.url}/console/sign-in`)).status).toBe(404);
  });
});
