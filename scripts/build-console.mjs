// Builds the console's browser files (src/console-ui/) into dist/console/: one minified ESM script
// (Preact + htm) and one stylesheet, each named by its content's hash so the server can let
// browsers cache them for a year, and manifest.json naming them (src/server/console/assets.ts).
// Nothing is fetched at run time: no CDN, no fonts.
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/console");

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: { app: join(root, "src/console-ui/main.ts"), style: join(root, "src/console-ui/style.css") },
  outdir: out,
  entryNames: "[name]-[hash]",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  metafile: true,
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
const script = outputs.find((file) => /^app-.*\.js$/.test(file));
const style = outputs.find((file) => /^style-.*\.css$/.test(file));
writeFileSync(join(out, "manifest.json"), `${JSON.stringify({ script, style })}\n`);
for (const file of [script, style]) console.log(`dist/console/${file}: ${statSync(join(out, file)).size} bytes`);
