// Publishers racing on one store: `vane flags set` run at once by several processes (two
// operators, two CI jobs) on one data folder. Each edits the stored version and publishes the
// next one; an edit acknowledged as stored must be in the bundle served after, never undone by
// another edit made from the same version.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { inStore, jsonFile, tempDir, vane } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** `vane ARGS` as its own process (the built CLI, as a user runs it): its exit code and stderr. */
async function vaneProcess(...args: string[]): Promise<{ code: number; err: string }> {
  try {
    const { stderr } = await promisify(execFile)(process.execPath, ["bin/vane.js", ...args], { cwd: ROOT });
    return { code: 0, err: stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, err: failed.stderr };
  }
}

const CHANGES = [
  ["checkout.buttonColor", "red", "red"],
  ["checkout.oneClick", "true", true],
  ["pricing.discountPercent", "5", 5],
  ["onboarding.flow", "quick", "quick"],
  ["recommendations.strategy", "recent", "recent"],
] as const;

describe("vane flags set, run by several processes at once on one store", () => {
  it("keeps every change it acknowledged; a change made from a version replaced meanwhile is refused, saying to make it again", async () => {
    const data = tempDir();
    expect((await vane("bundles", "put", jsonFile(demoBundle("2026-01-01T00:00:00.000Z")), "--data", data)).code).toBe(0);
    const runs = await Promise.all(CHANGES.map(([key, value]) => vaneProcess("flags", "set", key, value, "--project", "demo", "--data", data)));
    const served = await inStore(data, async (stores) => (await stores.bundles.get("demo", "production"))!.bundle);
    const defaults = Object.fromEntries(served.parameters.map((p) => [p.key, p.default]));
    const acknowledged = CHANGES.filter((_, i) => runs[i]!.code === 0);
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const [key, , value] of acknowledged) expect({ key, served: defaults[key] }).toEqual({ key, served: value });
    for (const run of runs.filter((r) => r.code !== 0)) {
      expect(run.code).toBe(1);
      expect(run.err).toMatch(/demo\/production changed while this change was made from version .* make the change again/);
    }
    // Every acknowledged change is its own version in the history.
    const history = await inStore(data, (stores) => stores.bundles.history("demo", "production"));
    expect(history).toHaveLength(acknowledged.length + 1);
  });
});
