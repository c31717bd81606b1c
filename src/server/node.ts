// The Node host: loads the engine from disk and serves the app with @hono/node-server.
import { readFileSync } from "node:fs";
import { serve } from "@hono/node-server";
import { loadEngine } from "../engine/loader.js";
import { createApp } from "./app.js";

export interface NodeServerOptions {
  readonly port: number;
  readonly host: string;
}

export interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

const packageVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

export async function startNodeServer({ port, host }: NodeServerOptions): Promise<RunningServer> {
  const app = createApp({ engine: await loadEngine(), version: packageVersion() });
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname: host }, (info) => {
      resolve({
        url: `http://${host.includes(":") ? `[${host}]` : host}:${info.port}`,
        close: () => new Promise((done, fail) => server.close((error) => (error ? fail(error) : done()))),
      });
    });
    server.once("error", reject);
  });
}
