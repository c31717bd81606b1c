// The pool's close is bounded (issue 33): past CLOSE_TIMEOUT_SECONDS the connections still lent
// are ended, and a client's end() waits for the server to close its side, which a peer gone silent
// never does. The "server" here completes the startup (AuthenticationOk, ReadyForQuery), then never
// answers nor closes its side (allowHalfOpen); no PostgreSQL is needed.
import net from "node:net";
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createPool } from "../../src/store/postgres/db.js";
import { CLOSE_TIMEOUT_SECONDS, END_CLIENTS_MS, endPool } from "../../src/store/postgres/open.js";

const servers: net.Server[] = [];
const sockets: net.Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) server.close();
});

/** AuthenticationOk then ReadyForQuery (idle): the client is connected, and hears nothing more. */
const READY = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]);

describe("the Postgres pool's close", () => {
  it("ends within its bound when a connection is still lent and the peer never closes", { timeout: 30_000 }, async () => {
    const server = net.createServer({ allowHalfOpen: true }, (socket) => {
      sockets.push(socket);
      socket.once("data", () => socket.write(READY));
    });
    servers.push(server);
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const { port } = server.address() as net.AddressInfo;
    const pool = createPool({ url: `postgres://vane@127.0.0.1:${port}/vane`, max: 2, connectTimeoutMs: 3_000 });
    const open = new Set<pg.PoolClient>();
    pool.on("connect", (client) => open.add(client));
    pool.on("remove", (client) => open.delete(client));
    // Lent, and not given back (between its queries, say): end() then sends its goodbye and waits for the close.
    const client = await pool.connect();
    const closed = new Promise((done) => client.once("end", done));
    const started = Date.now();
    const bound = CLOSE_TIMEOUT_SECONDS * 1_000 + 2 * END_CLIENTS_MS;
    const outcome = await Promise.race([endPool(pool, open).then(() => "ended"), new Promise((late) => setTimeout(() => late("still pending"), bound + 5_000))]);
    expect(outcome).toBe("ended");
    expect(Date.now() - started).toBeGreaterThanOrEqual(CLOSE_TIMEOUT_SECONDS * 1_000 - 5); // the queries had their time
    await closed; // its socket destroyed, not left to keep the process alive
  });
});
