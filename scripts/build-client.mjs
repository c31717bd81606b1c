// Builds vane/client for browsers and workers: dist/client/vane-client.js (one minified ESM file,
// es2022), its type declarations, and the two engine builds beside it, where the SDK looks for
// them by default; vane/react (dist/client/vane-react.js: the hooks alone, React left as an
// import); and vane/openfeature (dist/client/vane-openfeature.js), the OpenFeature providers,
// which import the client's file beside them. Prints each file's gzipped size (the README
// reports them).
// Run after build:wasm (it copies build/*.wasm): `npm run build` does both.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/client");
const entry = join(root, "src/sdk/index.ts");
const reactEntry = join(root, "src/sdk/react.ts");
const openFeatureEntry = join(root, "src/sdk/openfeature/index.ts");
const WASM_FILES = ["vane.wasm", "vane-scalar.wasm"];
/** Every entry: one minified ESM file for browsers and workers. */
const BROWSER_BUNDLE = { bundle: true, format: "esm", platform: "browser", target: "es2022", minify: true, sourcemap: "linked" };

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [entry],
  outfile: join(out, "vane-client.js"),
  ...BROWSER_BUNDLE,
  // The engine loader reads file: URLs with node:fs, and only in Node: left as a dynamic import.
  external: ["node:*"],
  // workerd gives modules no import.meta.url, and the engine loader makes its default URLs when
  // the module loads: a base that parses keeps the file loadable there (workers pass the wasm
  // option anyway, so the default URL is never fetched).
  define: { "import.meta.url": "__vaneModuleUrl" },
  banner: { js: 'const __vaneModuleUrl = import.meta.url ?? "file:///";' },
  plugins: [shapeCheckForValidation()],
  logLevel: "warning",
});

// The hooks import only types from the client, so the file holds them alone; React is the app's.
await build({
  entryPoints: [reactEntry],
  outfile: join(out, "vane-react.js"),
  ...BROWSER_BUNDLE,
  external: ["react"],
  logLevel: "warning",
});

await build({
  entryPoints: [openFeatureEntry],
  outfile: join(out, "vane-openfeature.js"),
  ...BROWSER_BUNDLE,
  plugins: [clientBeside()],
  logLevel: "warning",
});

for (const file of WASM_FILES) copyFileSync(join(root, "build", file), join(out, file));

emitDeclarations();
writeFileSync(join(out, "vane-client.d.ts"), 'export * from "./types/sdk/index.js";\n');
writeFileSync(join(out, "vane-react.d.ts"), 'export * from "./types/sdk/react.js";\n');
writeFileSync(join(out, "vane-openfeature.d.ts"), 'export * from "./types/sdk/openfeature/index.js";\n');

for (const file of ["vane-client.js", "vane-react.js", "vane-openfeature.js", ...WASM_FILES]) {
  const bytes = readFileSync(join(out, file));
  console.log(`dist/client/${file}: ${bytes.length} bytes, ${gzipSync(bytes, { level: 9 }).length} gzipped`);
}

/**
 * Bundles reach the client already validated by the service, so the client build checks only
 * their shape (src/sdk/bundle-shape.ts, same exports) instead of carrying the full validator:
 * about 3.5 KB of the SDK's gzipped size.
 */
function shapeCheckForValidation() {
  return {
    name: "vane-bundle-shape",
    setup(esbuild) {
      esbuild.onResolve({ filter: /^\.\/validate\.js$/ }, (args) =>
        args.importer === join(root, "src/bundle/compile.ts") ? { path: join(root, "src/sdk/bundle-shape.ts") } : undefined,
      );
    },
  };
}

/** The providers' import of the client becomes an import of vane-client.js beside them: one client, one engine. */
function clientBeside() {
  return {
    name: "vane-client-beside",
    setup(esbuild) {
      esbuild.onResolve({ filter: /^\.\.\/client\.js$/ }, (args) =>
        args.importer === join(root, "src/sdk/openfeature/providers.ts") ? { path: "./vane-client.js", external: true } : undefined,
      );
    },
  };
}

/** The SDK's declarations and those of the engine and bundle modules they name, under dist/client/types. */
function emitDeclarations() {
  const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram([entry, reactEntry, openFeatureEntry], {
    ...options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: join(root, "src"),
    outDir: join(out, "types"),
  });
  const result = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length > 0) {
    const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => "\n" };
    throw new Error(`declarations for vane/client failed:\n${ts.formatDiagnostics(diagnostics, host)}`);
  }
}
