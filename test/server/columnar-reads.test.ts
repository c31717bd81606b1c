// The admin API's and the console's event reads through DuckDB (issue 29 item 2): over a store
// whose events are split between Parquet files and the log's tail not yet archived, every answer
// is the one the store's own reads give (same shapes, order, filters, refusals, and an org- or
// project-scoped console key sees its own events only); and on `vane serve`, the admin API counts
// what `vane events count` counts, events the log has pruned after archiving them included; and
// the console's bandit report is `vane report --json`'s on such a store (issue 31).
import { describe, expect, it } from "vitest";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeSha256 } from "../../src/cli/store-access.js";
import { type ReadEvents, scanLog } from "../../src/server/admin/event-reads.js";
import { createKey } from "../../src/server/auth/key-admin.js";
import { columnarReads } from "../../src/server/columnar-reads.js";
import { startNodeServer } from "../../src/server/node.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { DERIVED_COPIES } from "../../src/store/retention.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { EventStore, EventType, StoredEvent } from "../../src/store/types.js";
import { inStore, tempDir, vane } from "../cli/helpers.js";
import { makeEvent } from "../store/fixtures.js";
import { loggedEvents } from "../store/logged-events.js";
import { waitFor } from "../wait.js";
import { call, startTestServer } from "./harness.js";

const ADMIN = "columnar-reads-admin-token-0123456789abcdef";
const TYPES: readonly EventType[] = ["exposure", "track", "decision"];
/** Project "shared" has events of two organizations: a filter by it alone is refused. */
const TENANTS = [
  { orgId: "org-1", projectId: "shop" },
  { orgId: "org-1", projectId: "shared" },
  { orgId: "org-2", projectId: "shared" },
  { orgId: "org-2", projectId: "other" },
];

function seeded(count: number): StoredEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const tenant = TENANTS[i % TENANTS.length]!;
    const type = TYPES[(i >> 2) % TYPES.length]!;
    const name = type === "track" ? `event-${i % 5}` : undefined;
    return makeEvent(`e${i}`, {
      ...tenant,
      env: i % 7 === 0 ? "staging" : "production",
      type,
      name,
      decisionId: type === "decision" ? `dec-${i}` : undefined,
      receivedAt: new Date(Date.UTC(2026, 10, 20, 12) + i * 61_000).toISOString(),
      ...(type === "track" && i % 3 === 0 && { discovered: true }),
      body: { type, event: name, unitKey: `user-${i}`, properties: { i, nested: { tag: `t${i}` } } },
    });
  });
}

async function append(events: EventStore, list: readonly StoredEvent[]): Promise<void> {
  for (let i = 0; i < list.length; i += 100) await events.append(list.slice(i, i + 100));
}

const FILTERS = ["", "org=org-1", "org=org-2", "project=shop", "project=shared", "project=shared&org=org-2", "type=track", "org=org-1&type=exposure", "project=none"];

describe("the server's event reads through DuckDB", () => {
  it("answer the admin API and the console as the store's reads do, over archive files and the log's tail", async () => {
    let reads: ReadEvents | undefined;
    const server = await startTestServer({
      adminToken: ADMIN,
      console: { assets: async () => undefined },
      readEvents: () => (use) => reads!(use),
    });
    try {
      const events = seeded(600);
      await append(server.stores.events, events.slice(0, 350));
      const parquetDir = `${server.dataDir}/parquet`;
      const sink = new NodeFileSink(parquetDir);
      const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
      await new ParquetPipeline({ events: server.stores.events, sink, writeRows: writer.writeRows }).catchUp();
      writer.close();
      await append(server.stores.events, events.slice(350));
      expect(await server.stores.events.checkpoint("parquet")).toBe(350);

      const keys = {
        org1: await server.key({ orgId: "org-1", scopes: ["console:read"] }),
        org2: await server.key({ orgId: "org-2", scopes: ["console:read"] }),
        shop: await server.key({ orgId: "org-1", projectId: "shop", scopes: ["console:read"] }),
      };
      const cookies: Record<string, string> = {};
      for (const [who, token] of Object.entries({ admin: ADMIN, ...keys })) {
        const session = await call(server, "/console/session", { body: { token }, headers: { Origin: server.url } });
        expect(session.status).toBe(200);
        cookies[who] = session.headers.get("Set-Cookie")!.split(";")[0]!;
      }
      const paths = [
        ...FILTERS.map((f) => `/admin/v1/events/count?${f}`),
        ...FILTERS.flatMap((f) => [1, 20, 1000].map((limit) => `/admin/v1/events?${f}&limit=${limit}`)),
        "/admin/v1/events/discovered",
      ];
      const answers = async () => {
        const out: Record<string, unknown> = {};
        for (const path of paths) {
          const answer = await call(server, path, { key: ADMIN });
          out[path] = { status: answer.status, body: await answer.json() };
        }
        for (const [who, cookie] of Object.entries(cookies)) {
          const answer = await call(server, "/console/api/events", { headers: { Cookie: cookie } });
          out[`console as ${who}`] = { status: answer.status, body: await answer.json() };
        }
        return out;
      };

      // The store's reads as they were: the log scanned newest first (SQLite's, before they went).
      const { events: stored } = server.stores;
      reads = (use) => use({ ...loggedEvents(stored), discovered: () => stored.discovered(), scan: (scope, visit) => scanLog(stored, scope, visit) });
      const fromStore = await answers();
      let opened = 0;
      const columnar = columnarReads({ events: server.stores.events, parquetDir, settings: { threads: 1, memoryBytes: 256e6 } });
      reads = (use) => (opened++, columnar(use));
      const fromDuck = await answers();
      expect(opened).toBe(paths.length + Object.keys(cookies).length);
      expect(fromDuck).toEqual(fromStore);

      // What the comparison covers: both sources, the refusal, and each viewer's own events only.
      expect(fromDuck["/admin/v1/events/count?"]).toEqual({ status: 200, body: { count: 600 } });
      expect(fromDuck["/admin/v1/events/count?project=shared"]).toMatchObject({ status: 400, body: { error: { message: "project shared has events of 2 organizations (org-1, org-2): pass --org" } } });
      const list = (fromDuck["/admin/v1/events?&limit=1000"] as { body: { events: { seq: number }[] } }).body.events;
      expect(list.map((e) => e.seq)).toEqual(Array.from({ length: 600 }, (_, i) => 600 - i));
      const page = (who: string) => (fromDuck[`console as ${who}`] as { body: { counts: Record<string, number>; discovered: { orgId: string; projectId: string }[]; last: { projectId: string }[] } }).body;
      expect(page("org2").discovered.every((d) => d.orgId === "org-2")).toBe(true);
      expect(page("org2").discovered.length).toBeGreaterThan(0);
      expect(page("shop").last.every((e) => e.projectId === "shop")).toBe(true);
      expect(Object.values(page("org1").counts).reduce((a, b) => a + b)).toBe(300);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe("vane serve's admin API", () => {
  it("counts what `vane events count` counts as events arrive, archived ones the log has pruned included", async () => {
    const data = tempDir();
    const seededStores = openSqliteStores({ dataDir: data });
    const { secret } = await createKey(seededStores.keys, { kind: "sk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:write"] }, { sha256: nodeSha256, now: Date.now() });
    await seededStores.close();
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir: data, catchUpMs: 50, adminToken: ADMIN });
    try {
      let acknowledged = 0;
      const send = async (batch: number) => {
        const at = new Date().toISOString();
        const events = Array.from({ length: 40 }, (_, i) => ({ type: "track", unitKey: `u-${batch}-${i}`, timestamp: at, event: "signup" }));
        const answer = await call(server, "/v1/events/batch", { key: secret, body: { events } });
        expect(answer.status).toBe(200);
        acknowledged += events.length;
      };
      const counts = async () => {
        const admin = (await (await call(server, "/admin/v1/events/count?type=track", { key: ADMIN })).json()) as { count: number };
        const cli = await vane("events", "count", "--type", "track", "--data", data, "--threads", "1");
        expect(cli.err).toBe("");
        return { admin: admin.count, cli: Number(cli.out) };
      };
      for (let batch = 0; batch < 5; batch++) await send(batch);
      expect(await counts()).toEqual({ admin: acknowledged, cli: acknowledged });

      // Once archived (and learned from), retention may drop them from the log: the reads still count them.
      const passed = () => inStore(data, async (stores) => Math.min(...(await Promise.all(DERIVED_COPIES.map((copy) => stores.events.checkpoint(copy))))));
      await waitFor(async () => (await passed()) >= acknowledged, "the Parquet copy and the learner past every event", { everyMs: 50 });
      expect(await passed()).toBe(acknowledged);
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // older than the rule below (0.86 s): time passing is the condition
      const pruned = await vane("events", "prune", "--retain-days", "0.00001", "--data", data);
      expect(pruned.out).toMatch(/^Pruned [1-9]\d* events/);

      for (let batch = 5; batch < 8; batch++) await send(batch);
      expect(await counts()).toEqual({ admin: acknowledged, cli: acknowledged });
    } finally {
      await server.close();
    }
  }, 120_000);
});

describe("the console's bandit report", () => {
  it("is `vane report --json`'s, archived decisions and rewards the log has pruned included", async () => {
    const server = await startTestServer({
      adminToken: ADMIN,
      console: { assets: async () => undefined },
      readEvents: (stores, dataDir) => columnarReads({ events: stores.events, parquetDir: `${dataDir}/parquet`, settings: { threads: 1, memoryBytes: 256e6 } }),
    });
    try {
      await server.putBundle(demoBundle("2026-11-19T00:00:00.000Z"));
      const sdk = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] });
      const decide = async (from: number, to: number) => {
        for (let i = from; i < to; i++) {
          const decided = (await (await call(server, "/v1/decide/recs-strategy", { key: sdk, body: { context: { userId: `user-${i}` } } })).json()) as { decisionId: string };
          const click = { type: "track", event: "click", unitKey: `user-${i}`, decisionId: decided.decisionId, timestamp: new Date(server.clock.now()).toISOString() };
          if (i % 2 === 0) expect(((await (await call(server, "/v1/events/batch", { key: sdk, body: { events: [click] } })).json()) as { accepted: number }).accepted).toBe(1);
        }
      };
      // Eight decisions archived into Parquet, then pruned from the log; four more only in the log.
      await decide(0, 8);
      const { events } = server.stores;
      const sink = new NodeFileSink(`${server.dataDir}/parquet`);
      const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
      await new ParquetPipeline({ events, sink, writeRows: writer.writeRows }).catchUp();
      writer.close();
      const archived = await events.checkpoint("parquet");
      expect((await events.prune({ eventsBeforeMs: Date.UTC(2100, 0), derived: ["parquet"], idsBeforeMs: 0 })).events).toBe(archived);
      await decide(8, 12);
      // Every reward window closed, for the server's clock and the CLI's (the wall clock).
      server.clock.advance(2 * 60 * 60 * 1000);

      const session = await call(server, "/console/session", { body: { token: ADMIN }, headers: { Origin: server.url } });
      const cookie = session.headers.get("Set-Cookie")!.split(";")[0]!;
      const answer = await call(server, `/console/api/projects/${DEMO_PROJECT}/production/policies/recs-strategy/report`, { headers: { Cookie: cookie } });
      expect(answer.status).toBe(200);
      const { report } = (await answer.json()) as { report: Record<string, unknown> };
      const cli = await vane("report", "recs-strategy", "--project", DEMO_PROJECT, "--json", "--data", server.dataDir, "--threads", "1");
      expect(cli.err).toBe("");
      const printed = JSON.parse(cli.out) as Record<string, unknown>;
      expect({ ...report, asOf: undefined }).toEqual({ ...printed, asOf: undefined });
      expect(report.decisions).toBe(12);
    } finally {
      await server.close();
    }
  }, 60_000);
});
