// What a real server's stop does with the connections it finds (src/server/http-close.ts and the
// stop's steps in src/server/node.ts), over real sockets:
// - a connection that has sent nothing (a browser's preconnect, a scraper's) is ended at once: Node's
//   server.close() left it open, so the stop waited for its whole deadline and reported itself
//   incomplete, and `vane serve` exited 1;
// - a request still in flight when the deadline passes (its body never finishes) leaves the stop
//   incomplete, but the store is closed anyway (the store step's pastDeadline): SQLite's WAL is
//   checkpointed and removed only when the store's last connection closes.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { seedDemo } from "./demo-folder.js";

const DEADLINE_MS = 1_500;
let dataDir = "";
const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A fresh data folder with the demo bundle and a write key. */
function seeded(): string {
  dataDir = mkdtempSync(join(tmpdir(), "vane-stop-connections-"));
  const stores = openSqliteStores({ dataDir });
  const key = seedDemo(stores);
  stores.close();
  return key;
}

async function connected(url: string): Promise<{ socket: Socket; closed: Promise<void>; received: () => string }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  sockets.push(socket);
  let received = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
  const closed = new Promise<void>((done) => socket.once("close", () => done()));
  await new Promise((ready) => socket.once("connect", ready));
  return { socket, closed, received: () => received };
}

describe("a server's stop and its open connections", () => {
  it("ends a connection that has sent nothing, and completes within its deadline", { timeout: 30_000 }, async () => {
    seeded();
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, stopDeadlineMs: DEADLINE_MS });
    const preconnect = await connected(server.url);
    const health = await fetch(`${server.url}/health`); // a keep-alive connection that has had its answer
    expect(health.status).toBe(200);
    await health.arrayBuffer();
    const outcome = await server.close();
    expect(outcome).toEqual({ complete: true, held: [] });
    await preconnect.closed;
    expect(preconnect.received()).toBe("");
  });

  it("ends a connection to the metrics port that has sent nothing", { timeout: 30_000 }, async () => {
    seeded();
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, stopDeadlineMs: DEADLINE_MS, metrics: { port: 0 } });
    const preconnect = await connected(server.metricsUrl!);
    expect(await server.close()).toEqual({ complete: true, held: [] });
    await preconnect.closed;
  });

  it("closes the store although a request still in flight held the stop past its deadline", { timeout: 30_000 }, async () => {
    const key = seeded();
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, stopDeadlineMs: DEADLINE_MS });
    expect(existsSync(join(dataDir, "vane.db-wal"))).toBe(true);
    const slow = await connected(server.url);
    const body = JSON.stringify({ events: [{ id: "e1", type: "track", unitKey: "u1", timestamp: new Date().toISOString(), event: "purchase" }] });
    slow.socket.write(`POST /v1/events/batch HTTP/1.1\r\nHost: vane\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    await new Promise((settle) => setTimeout(settle, 200)); // the request reaches its handler, which waits for the body
    const outcome = await server.close();
    expect(outcome).toMatchObject({ complete: false, waitingOn: "requests in flight", held: [] });
    expect(slow.received()).toBe(""); // nothing was answered, so nothing was acknowledged
    expect(existsSync(join(dataDir, "vane.db-wal"))).toBe(false);
  });
});
