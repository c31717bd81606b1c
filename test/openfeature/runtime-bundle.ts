// Bundles a runtime-side entry (test/openfeature/runtime/) with esbuild, as a user's bundler
// would: the official SDK, the built vane/openfeature and vane/client in one file; the engine
// stays a separate .wasm (and node: built-ins stay imports, for workerd's nodejs_compat).
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export async function bundleEntry(entry: "browser-entry.js" | "worker-entry.js" | "ofrep-web-entry.js"): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL(`runtime/${entry}`, import.meta.url))],
    bundle: true,
    format: "esm",
    platform: entry === "worker-entry.js" ? "neutral" : "browser",
    mainFields: ["module", "main"],
    conditions: entry === "worker-entry.js" ? ["workerd", "worker", "import"] : ["browser", "import"],
    target: "es2022",
    write: false,
    external: ["node:*", "async_hooks", "events", "./vane.wasm"],
    define: { "import.meta.url": '"file:///bundle.js"' },
    logLevel: "error",
  });
  return result.outputFiles[0]!.text;
}
