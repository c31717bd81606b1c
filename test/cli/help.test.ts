import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tempDir, vane } from "./helpers.js";

const VERBS = [
  ["serve"],
  ["import"],
  ["keys", "create"],
  ["keys", "list"],
  ["keys", "revoke"],
  ["keys", "rotate"],
  ["init"],
  ["bundles", "put"],
  ["bundles", "validate"],
  ["bundles", "list"],
  ["bundles", "get"],
  ["bundles", "history"],
  ["bundles", "diff"],
  ["bundles", "rollback"],
  ["flags", "set"],
  ["rollout"],
  ["events", "discovered"],
  ["events", "list"],
  ["events", "count"],
  ["events", "prune"],
  ["report"],
  ["results"],
];

/** A stack trace line, which no output may hold. */
const STACK = /\n\s+at .+:\d+:\d+/;

describe("vane help and usage errors", () => {
  it.each(VERBS)("vane %s %s --help prints its usage, exit code 0", async (...verb) => {
    for (const flag of ["--help", "-h"]) {
      const run = await vane(...verb, flag);
      expect(run.code).toBe(0);
      expect(run.err).toBe("");
      expect(run.out.startsWith(`Usage: vane ${verb.join(" ")}`)).toBe(true);
      expect(run.out).toContain("--data DIR");
    }
  });

  it.each([["keys"], ["bundles"], ["flags"], ["events"]])("vane %s --help lists its verbs; without one, exit code 2", async (group) => {
    const help = await vane(group, "--help");
    expect(help.code).toBe(0);
    const subs = VERBS.filter((v) => v[0] === group).map((v) => v[1]!);
    expect(help.out).toContain(`Usage: vane ${group} <${subs.join("|")}>`);
    for (const sub of subs) expect(help.out).toMatch(new RegExp(`\\n {2}${sub} +\\S`));
    const bare = await vane(group);
    expect(bare.code).toBe(2);
    expect(bare.err).toContain(`Usage: vane ${group} <`);
    const unknown = await vane(group, "destroy");
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain(`vane ${group}: unknown verb "destroy"`);
  });

  it("vane --help and vane help VERB; bare vane is a usage error", async () => {
    const help = await vane("--help");
    expect(help.code).toBe(0);
    for (const verb of ["serve", "import", "keys create|list|revoke|rotate", "bundles put|validate|list|get|history|diff|rollback", "flags set", "rollout", "init", "events discovered|list|count|prune"]) {
      expect(help.out).toContain(`\n  ${verb} `);
    }
    expect((await vane("help", "import")).out.startsWith("Usage: vane import FILE")).toBe(true);
    expect((await vane("help", "keys")).out.startsWith("Usage: vane keys <")).toBe(true);
    expect(await vane()).toMatchObject({ code: 2, out: "" });
  });

  it("vane --version prints the package version", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(await vane("--version")).toMatchObject({ code: 0, out: version });
  });

  it("an unknown verb is exit code 2 with the verb named and the usage", async () => {
    const run = await vane("frobnicate", "--now");
    expect(run.code).toBe(2);
    expect(run.out).toBe("");
    expect(run.err).toMatch(/^vane: unknown verb "frobnicate"\n\nUsage: vane <verb>/);
  });

  it.each([
    [["serve", "--bogus"], "vane serve: Unknown option '--bogus'", "Usage: vane serve"],
    [["keys", "list", "--verbose"], "vane keys list: Unknown option '--verbose'", "Usage: vane keys list"],
    [["import"], "vane import: missing argument", "Usage: vane import FILE"],
    [["import", "a.json", "b.json"], 'vane import: unexpected argument "b.json"', "Usage: vane import FILE"],
    [["bundles", "put", "--data"], "vane bundles put: Option '--data <value>' argument missing", "Usage: vane bundles put"],
    [["serve", "--port", "99999"], 'vane serve: --port must be an integer from 0 to 65535, got "99999"', "Usage: vane serve"],
    [["serve", "--pending-in-memory", "lots"], 'vane serve: --pending-in-memory must be an integer from 0 to 1000000000, got "lots"', "Usage: vane serve"],
    [["keys", "revoke", "a", "b"], 'vane keys revoke: unexpected argument "b"', "Usage: vane keys revoke"],
  ])("%j is a usage error: message, usage, exit code 2, no stack", async (argv, message, usage) => {
    const run = await vane(...argv);
    expect(run.code).toBe(2);
    expect(run.out).toBe("");
    expect(run.err.startsWith(`${message}\n\n${usage}`)).toBe(true);
    expect(run.err).not.toMatch(STACK);
  });

  it("a failure is exit code 1 with a one-line message, never a stack trace", async () => {
    const run = await vane("bundles", "list", "--data", `${tempDir()}/missing`);
    expect(run.code).toBe(1);
    expect(run.err.split("\n")).toHaveLength(1);
    expect(run.err).not.toMatch(STACK);
  });
});
