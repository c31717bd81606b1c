// The Worker's bundle (dist/edge/, `npm run build`) holds no Node-only module: it imports nothing
// but its engine, and none of the packages only the Node server uses (nor ajv) went into it.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BUILT_WORKER_DIR } from "../../src/edge/local.js";

// ajv runs nowhere in workerd (it compiles with `new Function`): the Worker has its own schema compiler.
const KEPT_OUT = ["better-sqlite3", "pino", "prom-client", "pg", "ioredis", "@hono/node-server", "duckdb", "@duckdb", "ajv"];
// Both lists are esbuild's: the files it bundled, and what the output still imports at run time.
const { inputs, imports } = JSON.parse(readFileSync(`${BUILT_WORKER_DIR}worker.meta.json`, "utf8")) as { inputs: string[]; imports: string[] };

describe("the Worker bundle", () => {
  it("imports only its engine, as a module beside it", () => {
    expect(imports).toEqual(["./vane.wasm"]);
  });

  it("was built from no Node-only package and no Node host module", () => {
    const packages = inputs.map((path) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1]).filter((name) => name !== undefined);
    expect(packages.filter((name) => KEPT_OUT.some((banned) => name === banned || name.startsWith(`${banned}/`)))).toEqual([]);
    expect(inputs.filter((path) => /src\/(server\/node|server\/roles|cli|store\/(sqlite|postgres)\/(open|db|writer))/.test(path))).toEqual([]);
    expect(inputs.some((path) => path.endsWith("src/server/app.ts"))).toBe(true);
  });
});
