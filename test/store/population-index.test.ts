// The population's rows are read by themselves (a start, a follower's mirror every second, each
// edge isolate's reload): through the partial index learned_population, not by scanning every
// per-entity row. Checked on the statement each store runs, in SQLite's and D1's query plans;
// PostgreSQL's is in postgres.test.ts, beside its server.
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { POPULATION_ARMS as D1_POPULATION_ARMS } from "../../src/store/edge/d1-learning-store.js";
import { POPULATION_ARMS } from "../../src/store/sqlite/learning-store.js";
import { migrate } from "../../src/store/sqlite/schema.js";

const ENTITIES = 2_000;

/** The plan's lines (EXPLAIN QUERY PLAN's `detail`). */
const plan = (rows: readonly { detail: string }[]) => rows.map((row) => row.detail).join("; ");

describe("the population's rows, read through their own index", () => {
  it("SQLite: a migrated store finds them without scanning the entities' rows", () => {
    const db = new Database(":memory:");
    migrate(db);
    const insert = db.prepare("INSERT INTO learned_arms (project_id, env, policy_id, entity, arm_key, stats) VALUES (?, ?, ?, ?, ?, ?)");
    const stats = Buffer.from(Float64Array.of(1, 2, 3).buffer);
    db.transaction(() => {
      for (const arm of ["a", "b"]) insert.run("proj", "production", "pol", "", arm, stats);
      for (let i = 0; i < ENTITIES; i++) insert.run("proj", "production", "per-user", `user-${i}`, "a", stats);
    })();
    expect(plan(db.prepare(`EXPLAIN QUERY PLAN ${POPULATION_ARMS}`).all() as { detail: string }[])).toContain("USING INDEX learned_population");
    expect(db.prepare(POPULATION_ARMS).all()).toHaveLength(2);
    db.close();
  });

  describe("D1", () => {
    let edge: LocalEdge;
    beforeAll(async () => {
      edge = await startLocalEdge({ port: 0, host: "127.0.0.1" });
    }, 60_000);
    afterAll(() => edge?.close());

    it("the schema the Worker applies finds them by the index, and the read scans only their rows (D1 bills rows read)", async () => {
      const db = await edge.database();
      const insert = db.prepare("INSERT INTO learned_arms (project_id, env, policy_id, entity, arm_key, stats) VALUES (?, ?, ?, ?, ?, ?)");
      const stats = new Uint8Array(Float64Array.of(1, 2, 3).buffer);
      await db.batch([
        ...["a", "b"].map((arm) => insert.bind("proj", "production", "pol", "", arm, stats)),
        ...Array.from({ length: ENTITIES }, (_, i) => insert.bind("proj", "production", "per-user", `user-${i}`, "a", stats)),
      ]);
      const { results } = await db.prepare(`EXPLAIN QUERY PLAN ${D1_POPULATION_ARMS}`).all<{ detail: string }>();
      expect(plan(results)).toContain("USING INDEX learned_population");
      const read = await db.prepare(D1_POPULATION_ARMS).all();
      expect(read.results).toHaveLength(2);
      expect((read.meta as { rows_read?: number }).rows_read).toBeLessThan(10);
    });
  });
});
