// The change feed's close is bounded (issue 33's follow-up): the listening connection's end()
// waits for the server to close its side, which a dropped connection never does, so the stores'
// close could wait for ever. The "server" here accepts the connection and never answers nor
// closes its side (allowHalfOpen), as a peer gone without a word; no PostgreSQL is needed.
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { LISTEN_END_MS, PostgresChangeFeed } from "../../src/store/postgres/changes.js";
import { waitFor } from "../wait.js";

const servers: net.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

describe("the Postgres change feed's close", () => {
  it("ends within its bound on a connection the server never closes, and leaves no socket open", { timeout: 30_000 }, async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer({ allowHalfOpen: true }, (socket) => sockets.push(socket));
    servers.push(server);
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const { port } = server.address() as net.AddressInfo;
    const feed = new PostgresChangeFeed({ host: "127.0.0.1", port, user: "vane", database: "vane" });
    const listened = feed.listen(() => undefined); // never listening: the server never answers
    await waitFor(() => sockets.length === 1, "the listener's connection");
    const openSockets = () => process.getActiveResourcesInfo().filter((resource) => resource === "TCPSocketWrap").length;
    const before = openSockets(); // the feed's and the server's end of it
    const started = Date.now();
    const outcome = await Promise.race([feed.close().then(() => "closed"), new Promise((late) => setTimeout(() => late("still pending after 10 s"), 10_000))]);
    expect(outcome).toBe("closed");
    expect(Date.now() - started).toBeGreaterThanOrEqual(LISTEN_END_MS - 5); // end() had its time
    await listened; // a stop resolves the listen that was waiting
    await waitFor(() => openSockets() === before - 1, "the feed's socket closed", { timeoutMs: 10_000 }); // destroyed, not left to keep the process alive
    for (const socket of sockets) socket.destroy();
  });
});
