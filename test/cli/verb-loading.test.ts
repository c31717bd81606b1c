// `vane VERB` loads that verb's module only (src/cli/main.ts): a command that reads events does not
// load the server's modules, which cost it a fifth of a second at start. A module hook in a child
// process records every module the command resolves.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadEntry } from "../../src/cli/main.js";
import { tempDir, vane } from "./helpers.js";

/** The modules `vane ...argv` resolves, as file URLs. */
function modulesLoaded(...argv: string[]): string[] {
  const dir = tempDir();
  const log = join(dir, "modules.log");
  writeFileSync(join(dir, "hooks.mjs"), `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, resolved.url + "\\n");
  return resolved;
}`);
  writeFileSync(join(dir, "register.mjs"), `import { register } from "node:module";\nregister(${JSON.stringify(`file://${join(dir, "hooks.mjs")}`)});`);
  writeFileSync(log, "");
  const main = JSON.stringify(`file://${join(import.meta.dirname, "../../src/cli/main.ts")}`);
  const child = spawnSync(process.execPath, ["--import", "tsx", "--import", join(dir, "register.mjs"), "--input-type=module", "-e", `const { main } = await import(${main}); process.exitCode = await main(${JSON.stringify(argv)}, { out() {}, err() {} });`], { encoding: "utf8" });
  expect(child.status, child.stderr).toBe(0);
  return readFileSync(log, "utf8").split("\n").filter((url) => url !== "");
}

describe("loading verbs", () => {
  it("vane results loads neither the server's modules nor other verbs'", () => {
    const loaded = modulesLoaded("results", "--help");
    expect(loaded.some((url) => url.endsWith("/src/cli/results.ts"))).toBe(true);
    for (const other of ["/src/cli/serve.ts", "/src/server/node.ts", "/src/cli/edge.ts", "/src/cli/bundles.ts"]) expect(loaded.filter((url) => url.endsWith(other))).toEqual([]);
  });

  it("every verb the listing shows loads under its own name", async () => {
    const listing = (await vane()).err.split("\n").filter((line) => /^ {2}\S/.test(line));
    expect(listing.length).toBeGreaterThan(10);
    for (const line of listing) {
      const [name, subverbs] = line.trim().split(/\s+/) as [string, string];
      const entry = await loadEntry(name);
      expect(entry?.name).toBe(name);
      if (entry !== undefined && "verbs" in entry) expect(entry.verbs.map((v) => v.name).join("|")).toBe(subverbs);
    }
    expect(await loadEntry("nope")).toBeUndefined();
  });
});
