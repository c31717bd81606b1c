// `vane serve --metrics PORT`: /metrics on a port of its own, so the API's port can face the
// internet while only the monitoring network reaches the metrics.
import { type Server, createServer } from "node:http";
import { closableHttp } from "../http-close.js";
import type { ServiceMetrics } from "./types.js";

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

export function listenForMetrics(metrics: Pick<ServiceMetrics, "scrape">, where: { readonly port: number; readonly host: string }): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "").split("?")[0];
    if (request.method !== "GET" || path !== "/metrics") {
      response.writeHead(404, { "Content-Type": "text/plain" }).end("Not found: metrics are at GET /metrics\n");
      return;
    }
    metrics.scrape().then(
      ({ contentType, body }) => response.writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-store" }).end(body),
      () => response.writeHead(500, { "Content-Type": "text/plain" }).end("metrics could not be collected\n"),
    );
  });
  const close = closableHttp(server);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(where.port, where.host, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : where.port;
      const host = where.host.includes(":") ? `[${where.host}]` : where.host;
      resolve({
        url: `http://${host}:${port}/metrics`,
        close,
      });
    });
  });
}
