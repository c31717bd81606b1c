// A tiny static file server on 127.0.0.1 for the browser runs: URL prefixes mapped to folders,
// plus pages held in memory. .wasm is served as application/wasm so browsers can stream-compile it.
import { readFile } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, resolve, sep } from "node:path";

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
};

export interface StaticRoutes {
  /** URL prefix ("/client/") → folder served under it. */
  readonly folders?: Readonly<Record<string, string>>;
  /** Exact path → HTML text. */
  readonly pages?: Readonly<Record<string, string>>;
}

export interface StaticServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function serveStatic(routes: StaticRoutes): Promise<StaticServer> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://localhost").pathname);
    const page = routes.pages?.[path];
    if (page !== undefined) {
      res.writeHead(200, { "Content-Type": TYPES[".html"], "Cache-Control": "no-store" }).end(page);
      return;
    }
    const file = fileFor(routes.folders ?? {}, path);
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    readFile(file).then(
      (body) => res.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream", "Cache-Control": "no-store" }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => closeServer(server) };
}

/** The file a path names under one of the folders; never outside it. */
function fileFor(folders: Readonly<Record<string, string>>, path: string): string | undefined {
  for (const [prefix, folder] of Object.entries(folders)) {
    if (!path.startsWith(prefix)) continue;
    const root = resolve(folder);
    const file = resolve(join(root, path.slice(prefix.length)));
    return file.startsWith(root + sep) ? file : undefined;
  }
  return undefined;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((done) => server.close(() => done()));
}
