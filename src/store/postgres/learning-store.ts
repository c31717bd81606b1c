// The learner's tables: learned arm statistics and the adaptive decisions, still in their reward
// window, that the learner spilled out of its memory. A learning step commits in one transaction
// with its log positions (and, when several servers share the store, a check of the learner's
// lease), so after a crash the learner re-reads exactly the events whose effects were not stored.
import type pg from "pg";
import type { ArmRow, LearningCommit, LearningPositions, LearningScan, LearningStore, OpenTrialBin, OpenTrialChanges, PendingDecision, PendingKey } from "../types.js";
import { type BinRow, floats, fromBinRow } from "../learning-rows.js";
import { LEARNED_CHECKPOINT, LEARNING_CHECKPOINT, PUBLISHED_KEY } from "../sqlite/learning-store.js";
import { read, run, transaction } from "./db.js";
import { scanLearningEvents } from "./learning-scan.js";
import { checkLease } from "./lease-store.js";

/** Decision ids per pendingFor query, entities per entityArms query. */
const LOOKUP_CHUNK = 10_000;

interface PendingRow {
  decision_id: string;
  policy_id: string;
  project_id: string;
  env: string;
  org_id: string;
  arm_key: string;
  entity: string;
  features: Buffer | null;
  reward_event: string;
  decided_at: number;
  closes_at: number;
  counted: boolean;
  rewarded: boolean;
}

const ARM_COLUMNS = "project_id, env, policy_id, entity, arm_key, stats";
/** The population's rows (entity ''), found through the partial index learned_population: its predicate written as the index's, so the planner matches it. */
export const POPULATION_ARMS = `SELECT ${ARM_COLUMNS} FROM learned_arms WHERE entity = ''::bytea`;

/** entity and arm_key are bytea (schema.ts: the learner's own rows name themselves with a NUL). */
interface ArmDbRow {
  project_id: string;
  env: string;
  policy_id: string;
  entity: Buffer;
  arm_key: Buffer;
  stats: Buffer;
}

const fromArmDbRow = (row: ArmDbRow): ArmRow => ({
  projectId: row.project_id,
  env: row.env,
  policyId: row.policy_id,
  entity: row.entity.toString("utf8"),
  armKey: row.arm_key.toString("utf8"),
  stats: floats(row.stats),
});

const PENDING = "decision_id, policy_id, project_id, env, org_id, arm_key, entity, features, reward_event, decided_at, closes_at, counted, rewarded";

export class PostgresLearningStore implements LearningStore {
  constructor(private readonly pool: pg.Pool) {}

  scan(afterSeq: number, limit: number, span: number): Promise<LearningScan> {
    return scanLearningEvents(this.pool, afterSeq, limit, span);
  }

  async arms(): Promise<ArmRow[]> {
    return (await read<ArmDbRow>(this.pool, `SELECT ${ARM_COLUMNS} FROM learned_arms`)).map(fromArmDbRow);
  }

  async populationArms(): Promise<ArmRow[]> {
    return (await read<ArmDbRow>(this.pool, POPULATION_ARMS)).map(fromArmDbRow);
  }

  async entityArms(projectId: string, env: string, policyId: string, entities: readonly string[]): Promise<ArmRow[]> {
    const found: ArmRow[] = [];
    for (let at = 0; at < entities.length; at += LOOKUP_CHUNK) {
      const keys = entities.slice(at, at + LOOKUP_CHUNK).map((entity) => Buffer.from(entity, "utf8"));
      const rows = await read<ArmDbRow>(this.pool, `SELECT ${ARM_COLUMNS} FROM learned_arms WHERE project_id = $1 AND env = $2 AND policy_id = $3 AND entity = ANY($4::bytea[])`, [projectId, env, policyId, keys]);
      for (const row of rows) found.push(fromArmDbRow(row));
    }
    return found;
  }

  async positions(): Promise<LearningPositions> {
    const [row] = await read<{ read: number | null; first: number | null; stored: number }>(
      this.pool,
      `SELECT (SELECT seq FROM checkpoints WHERE pipeline = $1) AS read,
              (SELECT seq FROM checkpoints WHERE pipeline = $2) AS first,
              (SELECT count(*) FROM pending_decisions) AS stored`,
      [LEARNED_CHECKPOINT, LEARNING_CHECKPOINT],
    );
    const { read: learned, stored } = row!;
    const first = row!.first ?? 0;
    return learned === null ? { learned: first, memoryFrom: first, stored } : { learned, memoryFrom: Math.min(first, learned), stored };
  }

  async pendingFor(decisionIds: readonly string[]): Promise<PendingDecision[]> {
    const found: PendingDecision[] = [];
    for (let at = 0; at < decisionIds.length; at += LOOKUP_CHUNK) {
      const ids = decisionIds.slice(at, at + LOOKUP_CHUNK);
      const rows = await read<PendingRow>(this.pool, `SELECT ${PENDING} FROM pending_decisions WHERE decision_id = ANY($1::text[])`, [ids]);
      for (const row of rows) found.push(fromPendingRow(row));
    }
    return found;
  }

  async openTrialBins(bins: number): Promise<OpenTrialBin[]> {
    // Bins as the delay model cuts them (delay.ts: W / bins wide), so a restart adds counts, not rows.
    const rows = await read<BinRow>(
      this.pool,
      `SELECT project_id, env, policy_id, arm_key, closes_at - decided_at AS window_ms, min(decided_at) AS at_ms, count(*) AS count
       FROM pending_decisions WHERE counted
       GROUP BY project_id, env, policy_id, arm_key, closes_at - decided_at,
                trunc(decided_at / greatest(1, (closes_at - decided_at) / $1::float8))`,
      [bins],
    );
    return rows.map(fromBinRow);
  }

  async due(nowMs: number, limit: number): Promise<PendingDecision[]> {
    const rows = await read<PendingRow>(this.pool, `SELECT ${PENDING} FROM pending_decisions WHERE closes_at <= $1 ORDER BY closes_at LIMIT $2`, [nowMs, limit]);
    return rows.map(fromPendingRow);
  }

  async commit(step: LearningCommit): Promise<void> {
    await transaction(this.pool, async (tx) => {
      if (step.lease !== undefined) await checkLease(tx, step.lease);
      await upsertArms(tx, step.arms);
      await removePending(tx, step.removePending);
      await addPending(tx, step.addPending);
      await rewardPending(tx, step.rewardPending);
      await run(
        tx,
        "INSERT INTO checkpoints (pipeline, seq) VALUES ($1, $2), ($3, $4) ON CONFLICT (pipeline) DO UPDATE SET seq = EXCLUDED.seq",
        [LEARNED_CHECKPOINT, step.checkpoint, LEARNING_CHECKPOINT, step.memoryFrom],
      );
    });
  }

  async publishOpenTrials({ upsert, remove, replace }: OpenTrialChanges): Promise<void> {
    if (!replace && upsert.length === 0 && remove.length === 0) return;
    // A bin starts at a multiple of W / bins, which need not be whole ms, and the columns are
    // bigint: rounded up, the start stays inside its own bin (a bin is wider than 1 ms), and the
    // same start always gives the same key.
    await transaction(this.pool, async (tx) => {
      if (replace) await run(tx, "DELETE FROM published_open_trials");
      if (remove.length > 0) {
        const keys = remove.map((b) => ({ project_id: b.projectId, env: b.env, policy_id: b.policyId, arm_key: b.armKey, at_ms: Math.ceil(b.atMs) }));
        await run(
          tx,
          `DELETE FROM published_open_trials p USING jsonb_to_recordset($1::jsonb) AS k(project_id text, env text, policy_id text, arm_key text, at_ms bigint)
           WHERE p.project_id = k.project_id AND p.env = k.env AND p.policy_id = k.policy_id AND p.arm_key = k.arm_key AND p.at_ms = k.at_ms`,
          [JSON.stringify(keys)],
        );
      }
      if (upsert.length === 0) return;
      const rows = upsert.map((b) => ({ project_id: b.projectId, env: b.env, policy_id: b.policyId, arm_key: b.armKey, window_ms: Math.round(b.windowMs), at_ms: Math.ceil(b.atMs), count: b.count }));
      await run(
        tx,
        `INSERT INTO published_open_trials (project_id, env, policy_id, arm_key, window_ms, at_ms, count)
         SELECT * FROM jsonb_to_recordset($1::jsonb)
           AS (project_id text, env text, policy_id text, arm_key text, window_ms bigint, at_ms bigint, count bigint)
         ON CONFLICT (${PUBLISHED_KEY}) DO UPDATE SET window_ms = EXCLUDED.window_ms, count = EXCLUDED.count`,
        [JSON.stringify(lastPerKey(rows, (r) => [r.project_id, r.env, r.policy_id, r.arm_key, r.at_ms]))],
      );
    });
  }

  async publishedOpenTrials(): Promise<OpenTrialBin[]> {
    const rows = await read<BinRow>(this.pool, "SELECT project_id, env, policy_id, arm_key, window_ms, at_ms, count FROM published_open_trials");
    return rows.map(fromBinRow);
  }
}

// Each part of a step is one statement over a jsonb array of rows, with bytes as hex. ON CONFLICT
// cannot touch a row twice in one statement, so rows are first made unique, the last one winning
// (as one statement per row would leave it).

function lastPerKey<T>(rows: readonly T[], key: (row: T) => unknown[]): T[] {
  return [...new Map(rows.map((row) => [JSON.stringify(key(row)), row])).values()];
}

async function upsertArms(tx: pg.PoolClient, arms: readonly ArmRow[]): Promise<void> {
  if (arms.length === 0) return;
  const rows = lastPerKey(arms, (a) => [a.projectId, a.env, a.policyId, a.entity, a.armKey]).map((a) => ({
    project_id: a.projectId,
    env: a.env,
    policy_id: a.policyId,
    entity: Buffer.from(a.entity, "utf8").toString("hex"),
    arm_key: Buffer.from(a.armKey, "utf8").toString("hex"),
    stats: hex(a.stats),
  }));
  await run(
    tx,
    `INSERT INTO learned_arms (project_id, env, policy_id, entity, arm_key, stats)
     SELECT project_id, env, policy_id, decode(entity, 'hex'), decode(arm_key, 'hex'), decode(stats, 'hex')
     FROM jsonb_to_recordset($1::jsonb) AS (project_id text, env text, policy_id text, entity text, arm_key text, stats text)
     ON CONFLICT (project_id, env, policy_id, entity, arm_key) DO UPDATE SET stats = EXCLUDED.stats`,
    [JSON.stringify(rows)],
  );
}

/** Pending keys as jsonb_to_recordset rows (JSON text); KEY_COLUMNS is their column list. */
const keyRows = (keys: readonly PendingKey[]): string =>
  JSON.stringify(keys.map((k) => ({ decision_id: k.decisionId, policy_id: k.policyId, project_id: k.projectId, env: k.env })));
const KEY_COLUMNS = "(decision_id text, policy_id text, project_id text, env text)";

async function removePending(tx: pg.PoolClient, keys: readonly PendingKey[]): Promise<void> {
  if (keys.length === 0) return;
  await run(
    tx,
    `DELETE FROM pending_decisions p USING jsonb_to_recordset($1::jsonb) AS k${KEY_COLUMNS}
     WHERE p.decision_id = k.decision_id AND p.policy_id = k.policy_id AND p.project_id = k.project_id AND p.env = k.env`,
    [keyRows(keys)],
  );
}

async function rewardPending(tx: pg.PoolClient, keys: readonly PendingKey[]): Promise<void> {
  if (keys.length === 0) return;
  await run(
    tx,
    `UPDATE pending_decisions p SET rewarded = true FROM jsonb_to_recordset($1::jsonb) AS k${KEY_COLUMNS}
     WHERE p.decision_id = k.decision_id AND p.policy_id = k.policy_id AND p.project_id = k.project_id AND p.env = k.env`,
    [keyRows(keys)],
  );
}

async function addPending(tx: pg.PoolClient, pending: readonly PendingDecision[]): Promise<void> {
  if (pending.length === 0) return;
  const rows = lastPerKey(pending, (p) => [p.decisionId, p.policyId, p.projectId, p.env]).map((p) => ({
    decision_id: p.decisionId,
    policy_id: p.policyId,
    project_id: p.projectId,
    env: p.env,
    org_id: p.orgId,
    arm_key: p.armKey,
    entity: p.entity,
    features: p.features ? hex(p.features) : null,
    reward_event: p.rewardEvent,
    decided_at: p.decidedAt,
    closes_at: p.closesAt,
    counted: p.counted,
    rewarded: p.rewarded,
  }));
  // An upsert: a decision logged again after its window closed is a new pending decision.
  await run(
    tx,
    `INSERT INTO pending_decisions (${PENDING})
     SELECT decision_id, policy_id, project_id, env, org_id, arm_key, entity, decode(features, 'hex'), reward_event, decided_at, closes_at, counted, rewarded
     FROM jsonb_to_recordset($1::jsonb) AS (decision_id text, policy_id text, project_id text, env text, org_id text, arm_key text,
       entity text, features text, reward_event text, decided_at bigint, closes_at bigint, counted boolean, rewarded boolean)
     ON CONFLICT (decision_id, policy_id, project_id, env) DO UPDATE SET org_id = EXCLUDED.org_id, arm_key = EXCLUDED.arm_key,
       entity = EXCLUDED.entity, features = EXCLUDED.features, reward_event = EXCLUDED.reward_event, decided_at = EXCLUDED.decided_at,
       closes_at = EXCLUDED.closes_at, counted = EXCLUDED.counted, rewarded = EXCLUDED.rewarded`,
    [JSON.stringify(rows)],
  );
}

function hex(values: Float64Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString("hex");
}

function fromPendingRow(row: PendingRow): PendingDecision {
  return {
    decisionId: row.decision_id,
    policyId: row.policy_id,
    orgId: row.org_id,
    projectId: row.project_id,
    env: row.env,
    armKey: row.arm_key,
    entity: row.entity,
    features: row.features ? floats(row.features) : undefined,
    rewardEvent: row.reward_event,
    decidedAt: row.decided_at,
    closesAt: row.closes_at,
    counted: row.counted,
    rewarded: row.rewarded,
  };
}
