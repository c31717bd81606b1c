// A resolve whose context's unit holds a lone UTF-16 surrogate (valid JSON: "\ud800") on
// `vane serve --store postgres://…`: answered and its decision stored, as on SQLite. JSON.stringify
// writes the surrogate as a \ud800 escape, which jsonb refuses (no UTF-8 form), so every such
// request was `503 Decision could not be recorded, retry shortly`, and every retry too, for good;
// decide and OFREP alike. The stored body holds U+FFFD in its place, as TextEncoder and the
// Parquet copy write it. (POST /v1/events refuses such an event on every store: event-batch.ts.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import { tempDir } from "../cli/helpers.js";
import { serveProcess } from "../cli/serve-process.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { loggedEvents } from "../store/logged-events.js";

let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
}, 60_000);
afterAll(async () => {
  await pg?.stop();
});

describe("PostgreSQL and a lone surrogate in a context", () => {
  it("stores the decisions of resolve, decide and OFREP for a unit holding one, U+FFFD in its place", async () => {
    const url = await pg.createDatabase();
    const served = await serveProcess(tempDir(), ["--store", url, "--log-level", "silent"]);
    try {
      const post = async (path: string, body: unknown) => {
        const response = await fetch(`${served.url}${path}`, { method: "POST", headers: { Authorization: `Bearer ${served.sk}`, "Content-Type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
        return { status: response.status, body: (await response.json()) as { decisionId?: string; metadata?: { decisionId?: string } } };
      };
      const resolved = await post("/v1/resolve", { context: { userId: "user-\ud800", accountId: "acct-1", country: "NL" } });
      const decided = await post("/v1/decide/recs-strategy", { context: { userId: "user-\udc00", accountId: "acct-1", country: "NL" } });
      const evaluated = await post("/ofrep/v1/evaluate/flags", { context: { targetingKey: "user-\udbff" } });
      expect([resolved.status, decided.status, evaluated.status]).toEqual([200, 200, 200]);

      const stores = await openPostgresStores({ url });
      try {
        const decisions = (await loggedEvents(stores.events).list({ limit: 10 })).filter((stored) => stored.event.type === "decision");
        const byId = new Map(decisions.map((stored) => [stored.event.decisionId, stored.event.unitKey]));
        expect(byId.get(resolved.body.decisionId)).toBe("user-\ufffd");
        expect(byId.get(decided.body.decisionId)).toBe("user-\ufffd");
        expect(byId.get(evaluated.body.metadata!.decisionId)).toBe("user-\ufffd");
      } finally {
        await stores.close();
      }
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
    }
  }, 90_000);
});
