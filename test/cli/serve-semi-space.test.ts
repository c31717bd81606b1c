// `vane serve` runs with V8's semi-spaces at 8 MiB and two malloc arenas (bin/vane.js's first line),
// started as users start it: the installed bin or the image's entrypoint (the file executed, through
// its #! line) and `npm start`; and a user's own NODE_OPTIONS still win. What is checked is V8's new
// space in the server's own process: a preload, passed as a user would (NODE_OPTIONS), churns
// short-lived objects until the new space has grown to its maximum (two semi-spaces) and prints its
// size, and the arenas' bound glibc read from the process's environment.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url);
const MiB = 1024 * 1024;

/** Only in the server: `npm start` is a node process too. */
const PROBE = `
if (process.argv.includes("serve")) {
  let young = [];
  for (let i = 0; i < 2e6; i++) {
    young.push({ i, s: "x" + i });
    if (young.length > 20000) young = [];
  }
  const space = require("node:v8").getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  process.stderr.write("NEW_SPACE " + space.space_size + "\\n");
  process.stderr.write("MALLOC_ARENA_MAX " + process.env.MALLOC_ARENA_MAX + "\\n");
}
`;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL"); // npm, its shell and the server
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts `command` (in its own process group) with the probe in NODE_OPTIONS after `userOptions`; the new space's size once the server is listening, and its MALLOC_ARENA_MAX. */
async function serverOf(command: readonly string[], userOptions = ""): Promise<{ newSpace: number; arenaMax: string }> {
  const dir = mkdtempSync(join(tmpdir(), "vane-semi-"));
  dirs.push(dir);
  const probe = join(dir, "probe.cjs");
  writeFileSync(probe, PROBE);
  const child = spawn(command[0]!, [...command.slice(1), "--port", "0", "--host", "127.0.0.1", "--data", join(dir, "data")], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, NODE_OPTIONS: `${userOptions} --require ${probe}`.trim() },
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  await new Promise<void>((ready, fail) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("Stop with Ctrl-C.")) ready();
    });
    child.on("exit", (code) => fail(new Error(`exited (${code}) before it was ready:\n${out}\n${err}`)));
  });
  const size = /NEW_SPACE (\d+)/.exec(err);
  const arenaMax = /MALLOC_ARENA_MAX (\S+)/.exec(err);
  if (size === null || arenaMax === null) throw new Error(`the probe said nothing:\n${err}`);
  return { newSpace: Number(size[1]), arenaMax: arenaMax[1]! };
}

describe.skipIf(process.platform === "win32")("vane serve's young generation and malloc arenas", () => {
  it("is two semi-spaces of 8 MiB and two arenas when the bin is executed (installed bin, the image's entrypoint)", async () => {
    expect(await serverOf(["bin/vane.js", "serve"])).toEqual({ newSpace: 16 * MiB, arenaMax: "2" });
  });

  it("is the same under npm start", async () => {
    expect(await serverOf(["npm", "start", "--silent", "--"])).toEqual({ newSpace: 16 * MiB, arenaMax: "2" });
  });

  it("follows the user's own NODE_OPTIONS", async () => {
    expect((await serverOf(["bin/vane.js", "serve"], "--max-semi-space-size=16")).newSpace).toBe(32 * MiB);
  });
});
