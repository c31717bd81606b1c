import { build } from "esbuild";
import { gzipSync } from "node:zlib";
const r = await build({ entryPoints: ["src/sdk/index.ts"], bundle: true, format: "esm", platform: "browser", target: "es2022", minify: true, write: false, external: ["node:*"], define: { "import.meta.url": "__u" }, logLevel: "silent",
  plugins: [{ name: "s", setup(b) { b.onResolve({ filter: /^\.\/validate\.js$/ }, (a) => a.importer.endsWith("src/bundle/compile.ts") ? { path: process.cwd() + "/src/sdk/bundle-shape.ts" } : undefined); } }] });
console.log(gzipSync(r.outputFiles[0].contents, { level: 9 }).length);
