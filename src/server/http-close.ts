// The HTTP server's part of a stop. server.close() stops accepting and ends keep-alive connections
// between requests, but a connection that has not sent a request yet (a browser's preconnect, a
// client pool's warm connection, a load balancer's TCP check) is not idle to Node: it held the
// stop until its deadline, and `vane serve` then exited 1. Nothing was asked on such a connection,
// so nothing is lost by ending it; a connection with a request in flight gets its answer, with
// `Connection: close` so that its client does not send another.
import type { ServerResponse } from "node:http";
import type { Server, Socket } from "node:net";

/** Node sets it to the response being written on that connection (its own closeIdleConnections reads it). */
type HttpSocket = Socket & { _httpMessage?: unknown };

/** Starts tracking `server`'s connections (one entry a connection, nothing a request); the returned function closes it. */
export function closableHttp(server: Server): () => Promise<void> {
  const connections = new Set<HttpSocket>();
  server.on("connection", (socket: HttpSocket) => {
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
  });
  return () =>
    new Promise<void>((done, fail) => {
      server.prependListener("request", (_request: unknown, response: ServerResponse) => response.setHeader("Connection", "close"));
      server.close((error) => (error ? fail(error) : done()));
      for (const socket of connections) if (!socket._httpMessage) socket.destroy();
    });
}
