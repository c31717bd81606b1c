// End to end: `node bin/vane.js serve` (the built dist/, as a user runs it) on an empty folder
// prints keys and curl commands; the commands are run as printed, through a shell.
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { resolve as resolvePath } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { compileBundle } from "../../src/bundle/compile.js";
import { resolve } from "../../src/bundle/resolve.js";
import type { Bundle } from "../../src/bundle/types.js";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { loadEngine } from "../../src/engine/loader.js";
import { inStore, tempDir, vane } from "./helpers.js";
import { loggedEvents } from "../store/logged-events.js";

const ROOT = new URL("../../", import.meta.url);
const READY = "Stop with Ctrl-C.";
const run = promisify(execFile);

interface Server {
  readonly child: ChildProcessWithoutNullStreams;
  readonly out: string;
  readonly err: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** Starts `vane serve` and resolves once its banner is complete. */
async function serve(dataDir: string): Promise<Server> {
  const child = spawn(process.execPath, ["bin/vane.js", "serve", "--port", "0", "--data", dataDir], { cwd: ROOT });
  started.push(child);
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on("exit", (code, signal) => done({ code, signal })));
  await new Promise<void>((ready, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes(READY)) ready();
    });
    void exited.then(({ code }) => fail(new Error(`vane serve exited (${code}) before it was ready:\n${out}\n${err}`)));
  });
  return { child, out, err: () => err, exited };
}

/** Runs a printed command as a shell would, with the status code appended to its output. */
async function curl(command: string): Promise<{ status: number; body: unknown }> {
  const { stdout } = await run("sh", ["-c", `${command} -w '\\n%{http_code}'`]);
  const at = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(at + 1)), body: JSON.parse(stdout.slice(0, at)) as unknown };
}

const commandsOf = (out: string) => out.split("\n").map((line) => line.trim()).filter((line) => line.startsWith("curl "));

/** The five printed commands, checked for what they call with which key. */
function printedCommands(out: string, url: string, keys: { pk: string; sk: string }): string[] {
  const commands = commandsOf(out);
  expect(commands).toHaveLength(5);
  const [config, resolveCommand, decideCommand, events, health] = commands as [string, string, string, string, string];
  for (const command of commands) expect(command).toContain(url);
  expect(config).toContain(`${url}/v1/config/demo`);
  expect(config).toContain(keys.pk);
  expect(resolveCommand).toContain(`${url}/v1/resolve`);
  expect(resolveCommand).toContain(keys.sk);
  expect(resolveCommand).toContain('"context":{"userId":"user-1","accountId":"acct-1","country":"US"}');
  expect(decideCommand).toContain(`${url}/v1/decide/recs-strategy`);
  expect(decideCommand).toContain(keys.sk);
  expect(events).toContain(`${url}/v1/events/batch`);
  expect(events).toContain('"event":"purchase","properties":{"sku":"A-1"}');
  expect(health).toBe(`curl -s ${url}/health`);
  return commands;
}

/** Runs the commands; checks each answer against what the demo project must give. */
async function runCommands([config, resolveCommand, decideCommand, events, health]: string[]): Promise<void> {
  const bundle = await curl(config!);
  expect(bundle.status).toBe(200);
  const version = (bundle.body as Bundle).version;
  expect(Date.parse(version)).toBeGreaterThan(Date.now() - 5 * 60_000);
  expect(bundle.body).toEqual(demoBundle(version));

  const resolved = await curl(resolveCommand!);
  expect(resolved.status).toBe(200);
  const expected = resolve(compileBundle(demoBundle(version), await loadEngine()), { userId: "user-1", accountId: "acct-1", country: "US" });
  expect(resolved.body).toMatchObject({
    decisionId: expect.any(String),
    assignments: expected.assignments,
    stateVersion: version,
    metadata: { unitKeyValue: "user-1", configVersion: version, layers: expected.layers.map((l) => expect.objectContaining({ layerId: l.layerId, bucket: l.bucket })) },
  });
  expect(Object.keys((resolved.body as { assignments: object }).assignments).sort()).toEqual(
    ["checkout.buttonColor", "checkout.oneClick", "onboarding.flow", "pricing.discountPercent", "recommendations.strategy"],
  );
  const decided = await curl(decideCommand!);
  expect(decided).toMatchObject({ status: 200, body: { policyId: "recs-strategy", metadata: { unitKeyValue: "user-1", algorithm: "thompson-beta" } } });
  const { probability, allocationKey } = decided.body as { probability: number; allocationKey: string };
  expect(["popular", "personal", "trending"]).toContain(allocationKey);
  expect(probability).toBeGreaterThan(0);
  expect(await curl(events!)).toMatchObject({ status: 200, body: { accepted: 1 } });
  expect(await curl(health!)).toMatchObject({ status: 200, body: { status: "ok" } });
}

/** What the first run left in the store: the two demo keys, the track event, the two decisions. */
async function checkStored(data: string): Promise<void> {
  const stored = await inStore(data, async (stores) => ({
    keys: await stores.keys.list(),
    tracks: await loggedEvents(stores.events).list({ type: "track" }),
    decisions: await loggedEvents(stores.events).count({ type: "decision" }),
  }));
  expect(stored.keys.map((k) => [k.kind, k.orgId, k.projectId, k.scopes])).toEqual([
    ["pk", "demo-org", "demo", ["sdk:read", "sdk:write"]],
    ["sk", "demo-org", "demo", ["sdk:read", "sdk:write"]],
  ]);
  expect(stored.tracks.map((e) => [e.event.name, e.event.body.properties])).toEqual([["purchase", { sku: "A-1" }]]);
  expect(stored.decisions).toBe(2); // the resolve's and the decide's
}

describe("vane serve, first run and later runs", () => {
  it("seeds the demo project, prints working keys and curl commands once, and stops cleanly on SIGTERM", async () => {
    const data = tempDir();
    const first = await serve(data);
    const url = /^Vane \S+ is listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(first.out)?.[1];
    const pk = /publishable key +(vane_pk_[A-Za-z0-9]+) /.exec(first.out)?.[1];
    const sk = /server-side key +(vane_sk_[A-Za-z0-9]+) /.exec(first.out)?.[1];
    if (url === undefined || pk === undefined || sk === undefined) throw new Error(`unexpected banner:\n${first.out}`);
    expect(first.out).toContain(`Data folder: ${resolvePath(data)}`);
    expect(first.out).toContain("shown once");
    expect(first.out).toContain("vane keys create --org demo-org --project demo --scopes sdk:read,sdk:write");
    await runCommands(printedCommands(first.out, url, { pk, sk }));

    first.child.kill("SIGTERM");
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(first.err()).toContain("vane serve: SIGTERM, stopping");
    await checkStored(data);

    const second = await serve(data);
    expect(second.out).not.toMatch(/vane_(pk|sk)_/);
    expect(second.out).not.toContain("First run");
    expect(second.out).toContain("Loaded: 1 bundle (demo/production), 2 keys");
    expect(second.out).toContain(`Data folder: ${resolvePath(data)}`);
    const [secondHealth, ...others] = commandsOf(second.out);
    expect(others).toEqual([]);
    expect(await curl(secondHealth!)).toMatchObject({ status: 200, body: { status: "ok" } });
    second.child.kill("SIGINT");
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect((await vane("keys", "list", "--data", data)).out.split("\n")).toHaveLength(3);
  });

  it("refuses a port in use with exit code 1, and stores no demo keys nobody saw", async () => {
    const data = tempDir();
    const first = await serve(data);
    const port = /:(\d+)$/m.exec(/listening on (\S+)/.exec(first.out)![1]!)![1]!;
    const other = tempDir();
    const clash = await run(process.execPath, ["bin/vane.js", "serve", "--port", port, "--data", other], { cwd: ROOT }).catch((error: { code: number; stderr: string }) => error);
    expect(clash).toMatchObject({ code: 1, stderr: expect.stringMatching(/^vane serve: .*EADDRINUSE/) });
    expect(await inStore(other, (stores) => stores.keys.list())).toEqual([]);
    first.child.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);
  });
});
