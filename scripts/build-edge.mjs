// Builds the Worker (src/edge/worker.ts): dist/edge/worker.js, one ESM file for workerd with every
// module bundled in, and dist/edge/vane.wasm beside it, which the Worker imports as a compiled
// module (Workers refuse to compile wasm at run time). `wrangler deploy` and `vane edge dev` both
// run these two files. Node-only modules must not enter: the build fails on any import left
// external but the engine's file, and test/edge/bundle-imports.test.ts checks the output and
// dist/edge/worker.meta.json, the list of files bundled.
// The console's files (dist/console/) go into the bundle too (src/edge/console.ts).
// Run after build:wasm (it copies build/vane.wasm) and build:console: `npm run build` runs all three.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/edge");
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

// Not the whole folder: tsc's build of src/edge/ (the local runner `vane edge dev` imports) is there too.
for (const file of ["worker.js", "worker.js.map", "worker.meta.json", "vane.wasm"]) rmSync(join(out, file), { force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: [join(root, "src/edge/worker.ts")],
  outfile: join(out, "worker.js"),
  bundle: true,
  format: "esm",
  // "neutral": no Node built-ins are assumed present, so one imported by mistake fails the build.
  platform: "neutral",
  mainFields: ["module", "main"],
  // Packages with a build for Node and one for browsers (hyparquet-writer) give workerd the latter, as wrangler does.
  conditions: ["workerd", "worker", "browser"],
  target: "es2022",
  minify: true,
  sourcemap: "linked",
  define: { VANE_VERSION: JSON.stringify(version) },
  plugins: [engineBeside(), ajvAbsent(), consoleFiles()],
  metafile: true,
  logLevel: "warning",
});
// What went into the bundle, for the test that keeps Node-only packages out of it.
// And what the bundle still imports at run time (esbuild's own list, not a scan of minified text).
const imports = [...new Set(Object.values(result.metafile.outputs).flatMap((output) => output.imports.map((imported) => imported.path)))];
writeFileSync(join(out, "worker.meta.json"), JSON.stringify({ inputs: Object.keys(result.metafile.inputs), imports }));

copyFileSync(join(root, "build/vane.wasm"), join(out, "vane.wasm"));
console.log(`dist/edge/worker.js: ${readFileSync(join(out, "worker.js")).length} bytes`);

/** The engine import becomes `./vane.wasm`, the file copied beside the bundle. */
function engineBeside() {
  return {
    name: "vane-engine-beside",
    setup(esbuild) {
      esbuild.onResolve({ filter: /\/vane\.wasm$/ }, () => ({ path: "./vane.wasm", external: true }));
    },
  };
}

/** ajv (server/events/schemas.ts's default compiler) is replaced by a stub: see src/edge/ajv-absent.ts. */
function ajvAbsent() {
  return {
    name: "vane-ajv-absent",
    setup(esbuild) {
      esbuild.onResolve({ filter: /^ajv\/dist\/2020\.js$/ }, () => ({ path: join(root, "src/edge/ajv-absent.ts") }));
    },
  };
}

/**
 * `vane:console-files` becomes dist/console/'s files as text, by name (scripts/build-console.mjs
 * wrote them): the Worker serves its console with no Static Assets binding, KV upload or fetch.
 */
function consoleFiles() {
  const dir = join(root, "dist/console");
  return {
    name: "vane-console-files",
    setup(esbuild) {
      esbuild.onResolve({ filter: /^vane:console-files$/ }, () => ({ path: "console-files", namespace: "vane-console" }));
      esbuild.onLoad({ filter: /.*/, namespace: "vane-console" }, () => {
        if (!existsSync(join(dir, "manifest.json"))) {
          return { errors: [{ text: "dist/console/ is not built: run npm run build:console before npm run build:edge" }] };
        }
        const files = Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), "utf8")]));
        return { contents: `export default ${JSON.stringify(files)};`, loader: "js", watchFiles: Object.keys(files).map((name) => join(dir, name)) };
      });
    },
  };
}
