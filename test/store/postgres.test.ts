// The PostgreSQL store: the contract, plus what only several servers on one database show:
// appends from two servers at once read back without a gap, migrations racing at first start,
// leases changing hands, and a database that goes away and comes back.
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresStores, SCHEMA_VERSION, openPostgresStores } from "../../src/store/postgres/index.js";
import { POPULATION_ARMS } from "../../src/store/postgres/learning-store.js";
import { LeaseLost, type LearningCommit, type SequencedEvent } from "../../src/store/types.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { describeStoreContract } from "./contract.js";
import { makeBatch, makeBundle, makeEvent, makeKey } from "./fixtures.js";
import { loggedEvents } from "./logged-events.js";
import { waitFor } from "../wait.js";

let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

describeStoreContract("postgres", async () => {
  const stores = await openPostgresStores({ url: await pg.createDatabase() });
  return { stores, cleanup: () => stores.close() };
}, { listsEvents: true });

/** Opens `count` stores on one fresh database: that many servers. */
async function servers(count: number, url?: string): Promise<PostgresStores[]> {
  const database = url ?? (await pg.createDatabase());
  return Promise.all(Array.from({ length: count }, () => openPostgresStores({ url: database })));
}

async function closeAll(stores: readonly PostgresStores[]): Promise<void> {
  await Promise.all(stores.map((s) => s.close()));
}

describe("postgres store: two servers appending at once", () => {
  it("gives contiguous seqs in commit order: a reader polling meanwhile never skips one, and every event is stored once", async () => {
    const [a, b, reader] = await servers(3);
    const WRITERS_PER_SERVER = 8;
    const BATCHES = 15;
    const BATCH_SIZE = 7;
    const total = 2 * WRITERS_PER_SERVER * BATCHES * BATCH_SIZE;
    const fed = new Map<PostgresStores, number[]>([[a!, []], [b!, []]]);
    for (const [server, seqs] of fed) server.events.onCommitted((events) => seqs.push(...events.map((e) => e.seq)));
    try {
      const writers = [a!, b!].flatMap((server, s) =>
        Array.from({ length: WRITERS_PER_SERVER }, async (_, w) => {
          for (let i = 0; i < BATCHES; i++) await server.events.append(makeBatch(`s${s}-w${w}-b${i}`, BATCH_SIZE));
        }),
      );
      let done = false;
      const polled: SequencedEvent[] = [];
      const poll = (async () => {
        // What a pipeline does: read after its checkpoint, move the checkpoint to the last seq read.
        for (;;) {
          const finished = done; // read before the page: once set, the page holds every last commit
          const page = await reader!.events.readAfter(polled.at(-1)?.seq ?? 0, 50);
          polled.push(...page);
          if (page.length === 0 && finished) break;
          if (page.length === 0) await sleep(1);
        }
      })();
      await Promise.all(writers);
      done = true;
      await poll;
      expect(polled.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      expect(new Set(polled.map((e) => e.event.id)).size).toBe(total);
      // Each batch in one run of seqs.
      const seqOf = new Map(polled.map((e) => [e.event.id, e.seq]));
      const first = seqOf.get("evt-s1-w3-b4-0")!;
      expect(makeBatch("s1-w3-b4", BATCH_SIZE).map((e) => seqOf.get(e.id))).toEqual(Array.from({ length: BATCH_SIZE }, (_, i) => first + i));
      // Each server's listeners got its own appends, in commit order.
      for (const seqs of fed.values()) {
        expect(seqs).toHaveLength(total / 2);
        expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
      }
    } finally {
      await closeAll([a!, b!, reader!]);
    }
  });

  it("stores an event two servers receive at once with the same sender id once", async () => {
    const [a, b] = await servers(2);
    try {
      const sent = (tag: string, id: string) => makeEvent(tag, { clientId: id, body: { type: "track", id } });
      const receipts = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? a! : b!).events.append([sent(`x${i}`, "same"), sent(`y${i}`, `own-${i}`)])),
      );
      expect(receipts.reduce((n, r) => n + r.stored, 0)).toBe(21);
      expect(receipts.reduce((n, r) => n + r.duplicates, 0)).toBe(19);
      expect(await loggedEvents(a!.events).count()).toBe(21);
    } finally {
      await closeAll([a!, b!]);
    }
  });
});

describe("postgres store: appends committed in groups", () => {
  it("commits appends that arrive together in one group, each with its own receipt, and a batch the database refuses fails alone", async () => {
    const [stores] = await servers(1);
    try {
      const bad = makeBatch("bad", 2, { body: { text: "a\u0000b" } }); // jsonb cannot hold a NUL character
      const calls = [makeBatch("a", 3), makeBatch("b", 2, { clientId: "same" }), bad, makeBatch("c", 4), makeBatch("d", 1, { clientId: "same" })];
      const results = await Promise.allSettled(calls.map((batch) => stores!.events.append(batch)));
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
      const receipts = results.map((r) => (r.status === "fulfilled" ? r.value : undefined));
      // In call order, contiguous; the second "same" (within b, then in d) is a duplicate.
      expect(receipts).toEqual([
        { lastSeq: 3, stored: 3, duplicates: 0 },
        { lastSeq: 4, stored: 1, duplicates: 1 },
        undefined,
        { lastSeq: 8, stored: 4, duplicates: 0 },
        { lastSeq: 8, stored: 0, duplicates: 1 },
      ]);
      const stored = (await stores!.events.readAfter(0, 100)).map((e) => [e.seq, e.event.id]);
      expect(stored).toEqual([...makeBatch("a", 3), makeBatch("b", 1)[0]!, ...makeBatch("c", 4)].map((e, i) => [i + 1, e.id]));
    } finally {
      await stores!.close();
    }
  });
});

describe("postgres store: the schema", () => {
  it("migrates once when several servers start at once on an empty database", async () => {
    const url = await pg.createDatabase();
    const started = await servers(5, url);
    const raw = new Client({ connectionString: url });
    await raw.connect();
    try {
      expect((await raw.query("SELECT version FROM vane_schema")).rows).toEqual([{ version: SCHEMA_VERSION }]);
      await started[0]!.keys.put(makeKey(1));
      expect(await started[4]!.keys.byId(makeKey(1).id)).toStrictEqual(makeKey(1));
    } finally {
      await raw.end();
      await closeAll(started);
    }
  });

  it("keys the published open trials on an upgrade from schema 2, every bin kept (two alike added up)", async () => {
    const url = await pg.createDatabase();
    await closeAll(await servers(1, url));
    const AT = 1_700_000_000_000;
    const bin = (armKey: string, atMs: number, count: number) => ({ projectId: "p", env: "production", policyId: "pol", armKey, windowMs: 60_000, atMs, count });
    const raw = new Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query(`DROP TABLE published_open_trials;
        CREATE TABLE published_open_trials (project_id text NOT NULL, env text NOT NULL, policy_id text NOT NULL, arm_key text NOT NULL,
          window_ms bigint NOT NULL, at_ms bigint NOT NULL, count bigint NOT NULL);
        UPDATE vane_schema SET version = 2`);
      for (const [arm, at, count] of [["a", AT, 3], ["a", AT + 15, 1], ["b", AT, 4], ["a", AT, 2]] as const) {
        await raw.query("INSERT INTO published_open_trials VALUES ('p', 'production', 'pol', $1, 60000, $2, $3)", [arm, at, count]);
      }
    } finally {
      await raw.end();
    }
    const [upgraded] = await servers(1, url);
    try {
      const sorted = async () => (await upgraded!.learning.publishedOpenTrials()).sort((x, y) => x.armKey.localeCompare(y.armKey) || x.atMs - y.atMs);
      expect(await sorted()).toEqual([bin("a", AT, 5), bin("a", AT + 15, 1), bin("b", AT, 4)]);
      await upgraded!.learning.publishOpenTrials({ upsert: [bin("a", AT, 7)], remove: [bin("b", AT, 4)], replace: false });
      expect(await sorted()).toEqual([bin("a", AT, 7), bin("a", AT + 15, 1)]);
    } finally {
      await closeAll([upgraded!]);
    }
  });

  it("fills each env's first publication on an upgrade from schema 4, the earliest time of its history and bundle; a later put keeps it", async () => {
    const url = await pg.createDatabase();
    await closeAll(await servers(1, url));
    // As text "…T11:30:00+01:00" sorts after "…T10:45:00.000Z"; as a time it is 10:30Z, the earliest.
    const EARLIEST = "2026-11-29T11:30:00+01:00";
    const raw = new Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query("DROP TABLE published_envs; UPDATE vane_schema SET version = 4");
      const bundle = "INSERT INTO bundles (project_id, env, org_id, version, stored_at, bundle) VALUES ($1, $2, 'org-1', $3, $4, $5)";
      const history = "INSERT INTO bundle_history (project_id, env, version, org_id, stored_at, bundle) VALUES ('shop', 'production', $1, 'org-1', $2, '{}')";
      await raw.query(bundle, ["shop", "production", "v3", "2026-11-29T12:00:00.000Z", JSON.stringify(makeBundle("shop", "production", "v3"))]);
      await raw.query(history, ["v1", "2026-11-29T10:45:00.000Z"]);
      await raw.query(history, ["v2", EARLIEST]);
      await raw.query(history, ["v3", "2026-11-29T12:00:00.000Z"]);
      // Its history pruned away: the bundle's own time.
      await raw.query(bundle, ["shop", "staging", "v1", "2026-11-29T09:00:00.000Z", JSON.stringify(makeBundle("shop", "staging", "v1"))]);
    } finally {
      await raw.end();
    }
    const [upgraded] = await servers(1, url);
    try {
      const firsts = async () => (await upgraded!.bundles.firstPublications()).map((first) => [first.env, first.storedAt]).sort();
      expect(await firsts()).toEqual([
        ["production", EARLIEST],
        ["staging", "2026-11-29T09:00:00.000Z"],
      ]);
      await upgraded!.bundles.put(makeBundle("shop", "production", "v4"), "2026-11-30T00:00:00.000Z");
      await upgraded!.bundles.put(makeBundle("shop", "preview", "v1"), "2026-11-30T00:00:01.000Z");
      expect(await firsts()).toEqual([
        ["preview", "2026-11-30T00:00:01.000Z"],
        ["production", EARLIEST],
        ["staging", "2026-11-29T09:00:00.000Z"],
      ]);
    } finally {
      await closeAll([upgraded!]);
    }
  });

  it("refuses a database written by a newer schema", async () => {
    const url = await pg.createDatabase();
    await closeAll(await servers(1, url));
    const raw = new Client({ connectionString: url });
    await raw.connect();
    await raw.query("UPDATE vane_schema SET version = $1", [SCHEMA_VERSION + 1]);
    await raw.end();
    await expect(openPostgresStores({ url })).rejects.toThrow(/newer than this build/);
  });
});

describe("postgres store: the population's rows", () => {
  // A start and a follower's mirror (every second) read only them; without their partial index
  // the read scanned every per-entity row (test/store/population-index.test.ts for SQLite and D1).
  it("are read through their own index, not by scanning the entities' rows", async () => {
    const url = await pg.createDatabase();
    const [stores] = await servers(1, url);
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(
        `INSERT INTO learned_arms (project_id, env, policy_id, entity, arm_key, stats)
         SELECT 'proj', 'production', 'per-user', convert_to('user-' || i, 'UTF8'), '\\x61'::bytea, '\\x00'::bytea FROM generate_series(1, 20000) AS i
         UNION ALL SELECT 'proj', 'production', 'pol', ''::bytea, convert_to(arm, 'UTF8'), '\\x00'::bytea FROM unnest(ARRAY['a', 'b']) AS arm`,
      );
      await client.query("ANALYZE learned_arms");
      const [{ "QUERY PLAN": [explained] }] = (await client.query(`EXPLAIN (FORMAT JSON) ${POPULATION_ARMS}`)).rows;
      expect(JSON.stringify(explained)).toContain('"Index Name":"learned_population"');
      expect((await client.query(POPULATION_ARMS)).rows).toHaveLength(2);
    } finally {
      await client.end();
      await stores!.close();
    }
  });
});

describe("postgres store: leases across servers", () => {
  const step = (checkpoint: number, holder: string): LearningCommit => ({
    arms: [{ projectId: "p", env: "production", policyId: "pol", entity: "", armKey: "a", stats: new Float64Array([checkpoint, 1]) }],
    addPending: [],
    rewardPending: [],
    removePending: [],
    checkpoint,
    memoryFrom: checkpoint,
    lease: { name: "learner", holder },
  });

  it("another server takes an expired lease over, and the old holder's commits are refused, changing nothing", async () => {
    const [a, b] = await servers(2);
    try {
      expect(await a!.leases.acquire("learner", "a", 60_000)).toBe(true);
      expect(await b!.leases.acquire("learner", "b", 60_000)).toBe(false);
      await a!.learning.commit(step(1, "a"));
      expect(await a!.leases.acquire("learner", "a", 100)).toBe(true); // its last renewal: a stalls past it
      await waitFor(() => b!.leases.acquire("learner", "b", 60_000), "b taking the lease over once it expired", { everyMs: 50 });
      await expect(a!.learning.commit(step(2, "a"))).rejects.toBeInstanceOf(LeaseLost);
      expect(await a!.leases.acquire("learner", "a", 60_000)).toBe(false);
      await b!.learning.commit(step(3, "b"));
      expect((await a!.learning.positions()).learned).toBe(3);
      expect(Array.from((await a!.learning.arms())[0]!.stats)).toEqual([3, 1]);
    } finally {
      await closeAll([a!, b!]);
    }
  });
});

describe("postgres store: a database that goes away", () => {
  it("rejects calls while the server is down, says so in health(), and works again after a restart", async () => {
    const own = await startPostgres(); // its own server: killing it must not disturb the other tests
    try {
      const stores = await openPostgresStores({ url: await own.createDatabase() });
      await stores.events.append(makeBatch("before", 3));
      await own.kill();
      const calls = await Promise.allSettled([
        stores.keys.list(),
        stores.bundles.get("proj-1", "production"),
        stores.events.append(makeBatch("during", 2)),
        stores.learning.positions(),
        stores.leases.acquire("learner", "a", 1_000),
      ]);
      expect(calls.map((call) => call.status)).toEqual(Array(5).fill("rejected"));
      expect(await stores.health()).toEqual({ bundles: "down", keys: "down", events: "down" });

      await own.restart();
      // The breaker refuses calls for a moment after the last failure, then lets them try again.
      await waitFor(async () => (await stores.health()).events === "ok", "health() saying events ok after the restart", { everyMs: 100 });
      expect(await stores.health()).toEqual({ bundles: "ok", keys: "ok", events: "ok" });
      expect(await stores.events.append(makeBatch("after", 2))).toEqual({ lastSeq: 5, stored: 2, duplicates: 0 });
      expect((await stores.events.readAfter(0, 10)).map((e) => e.event.id)).toEqual([...makeBatch("before", 3), ...makeBatch("after", 2)].map((e) => e.id));
      await stores.close();
    } finally {
      await own.stop();
    }
  });

  it("listens for changes again once the server is back, on a connection of its own", async () => {
    const own = await startPostgres();
    try {
      const url = await own.createDatabase();
      const listening = await openPostgresStores({ url });
      const seen: unknown[] = [];
      const stop = await listening.changes!.listen((change) => seen.push(change));
      await own.kill();
      await own.restart();
      const writer = await openPostgresStores({ url });
      // The listener reconnects with backoff: a change sent until then is not heard (the caches' refresh covers it).
      await waitFor(async () => {
        await writer.bundles.put(makeBundle("proj-1", "production", new Date().toISOString()), new Date().toISOString());
        return seen.length > 0;
      }, "a change heard after the listener reconnected", { everyMs: 200 });
      expect(seen[0]).toEqual({ kind: "bundle", projectId: "proj-1", env: "production" });
      await stop();
      await Promise.all([listening.close(), writer.close()]);
    } finally {
      await own.stop();
    }
  });
});
