#!/usr/bin/env node
// Serves the browser example (this folder) and the built client (dist/client/, from
// `npm run build`) on 127.0.0.1: `npm run example [-- --port 8788 --host 127.0.0.1]`.
// .wasm goes out as application/wasm, so the browser compiles the engine while it downloads.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const CLIENT = fileURLToPath(new URL("../../dist/client/", import.meta.url));
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".wasm": "application/wasm", ".map": "application/json" };

const { values } = parseArgs({ options: { port: { type: "string", default: "8788" }, host: { type: "string", default: "127.0.0.1" } } });
if (!existsSync(join(CLIENT, "vane-client.js"))) {
  console.error("dist/client/vane-client.js is missing: run npm run build first.");
  process.exit(1);
}

const server = createServer(async (req, res) => {
  const path = decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname);
  const file = path.startsWith("/client/") ? inside(CLIENT, path.slice("/client/".length)) : inside(HERE, path === "/" ? "index.html" : path.slice(1));
  if (file === undefined) return res.writeHead(404).end("Not found");
  try {
    const body = await readFile(file);
    res.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream", "Cache-Control": "no-cache" }).end(body);
  } catch {
    res.writeHead(404).end("Not found");
  }
});

server.listen(Number(values.port), values.host, () => {
  const { port } = server.address();
  console.log(`Vane browser example: http://${values.host}:${port}/`);
  console.log("Start the service with `npm start` and paste the publishable key it prints (vane_pk_…) into the page.");
});

/** The file `relative` names under `root`, never outside it. */
function inside(root, relative) {
  const file = resolve(root, relative);
  return file.startsWith(resolve(root) + sep) ? file : undefined;
}
