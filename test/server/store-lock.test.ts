// Another process holding the store's write lock (issue 14): the CLI writing to vane.db while the
// server runs. Only the writes that need the lock wait, and then answer the contract's 503; config
// and health go on answering meanwhile, and /health says which store cannot write.
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { tempDir } from "../cli/helpers.js";
import { type ServeProcess, serveProcess } from "../cli/serve-process.js";

/** Each step gets this long; a hung one fails saying which, with what the server wrote, instead of the test's bare timeout. */
const STEP_MS = 30_000;

async function within<T>(server: ServeProcess, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`${what}: nothing within ${STEP_MS} ms\nvane serve's stderr:\n${server.stderr().slice(-4000)}`)), STEP_MS);
  });
  try {
    return await Promise.race([work, hung]);
  } finally {
    clearTimeout(timer);
  }
}

const track = (id: string) => ({ id, type: "track", unitKey: "u1", timestamp: "2026-11-21T12:00:00Z", event: "click" });

describe("another process holds the write lock", () => {
  it("answers config and health while it holds it; appends get 503 with Retry-After; /health says events are degraded until writes work again", async () => {
    const dataDir = tempDir();
    const server = await serveProcess(dataDir);
    const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
    const json = { "Content-Type": "application/json" };
    const config = await fetch(`${server.url}/v1/config/demo`, { headers: auth(server.pk) });
    const etag = config.headers.get("ETag")!;

    // Held until the checks below are done, however long they take: the server's appends give up
    // (its busy timeout is 5 s) while it is still held, and every answer below comes meanwhile.
    const cli = new Database(path.join(dataDir, "vane.db"));
    cli.exec("BEGIN IMMEDIATE");
    const release = () => {
      if (!cli.open) return;
      cli.exec("COMMIT");
      cli.close();
    };
    try {
      // resolve stores a decision event: it is one of the writes that wait (then 200, or a 503).
      const resolved = fetch(`${server.url}/v1/resolve`, { method: "POST", headers: { ...auth(server.sk), ...json, "X-Project-Id": "demo" }, body: JSON.stringify({ context: { userId: "u1" } }) });
      const batch = fetch(`${server.url}/v1/events/batch`, { method: "POST", headers: { ...auth(server.sk), ...json }, body: JSON.stringify({ events: [track("held-1")] }) });
      // Each of these must come back while the lock is still held, not after.
      for (let i = 0; i < 5; i++) {
        const answers = await within(server, "health and config while the lock is held", Promise.all([
          fetch(`${server.url}/health`),
          fetch(`${server.url}/v1/config/demo`, { headers: { ...auth(server.pk), "If-None-Match": etag } }),
        ]));
        expect(answers[0].status).toBe(200);
        expect(answers[1].status).toBe(304);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const refused = await within(server, "the batch sent while the lock is held", batch);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("Retry-After")).toBe("2");
      expect(await refused.json()).toMatchObject({ error: { code: "EVENTS_NOT_STORED" }, accepted: 0, retryable: true });
      const health = await (await fetch(`${server.url}/health`)).json();
      expect(health).toMatchObject({ status: "degraded", stores: { events: "down", bundles: "ok", keys: "ok" } });
      expect([200, 503]).toContain((await within(server, "the resolve sent while the lock is held", resolved)).status);
    } finally {
      release();
    }
    const retried = await within(server, "the batch resent after the lock", fetch(`${server.url}/v1/events/batch`, { method: "POST", headers: { ...auth(server.sk), ...json }, body: JSON.stringify({ events: [track("held-1")] }) }));
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ status: "ok", stores: { events: "ok" } });
    server.child.kill("SIGTERM");
    expect(await within(server, "the exit after SIGTERM", server.exited)).toMatchObject({ code: 0 });
  });
});
