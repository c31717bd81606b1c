// What the learner keeps, in D1: the SQLite store's tables (pending decisions a row per layer, as
// the SQLite store kept them before its migration 12: edge/schema.ts), its scan (learning-rows.ts scanSql)
// over the events the queue consumer stored, and each learning step committed in one D1 batch
// (one transaction) with its log positions. One learner writes here (the Worker's learner Durable
// Object), so a step needs no lease; the isolates read the statistics and published open trials.
import { type BinRow, type ScanRow, floats, fromBinRow, scanPage, scanSql } from "../learning-rows.js";
import { LEARNED_CHECKPOINT, LEARNING_CHECKPOINT, PUBLISHED_KEY } from "../sqlite/learning-store.js";
import type { ArmRow, LearningCommit, LearningPositions, LearningScan, LearningStore, OpenTrialBin, OpenTrialChanges, PendingDecision, PendingKey } from "../types.js";
import type { D1Database, D1PreparedStatement } from "./bindings.js";

/** D1 returns a BLOB as an array of byte values. */
type Blob = number[] | ArrayBuffer | Uint8Array;

/** A pending decision's row (edge/schema.ts), one per layer. */
interface PendingRow {
  decision_id: string;
  policy_id: string;
  project_id: string;
  env: string;
  org_id: string;
  arm_key: string;
  entity: string;
  features: Uint8Array | null;
  reward_event: string;
  decided_at: number;
  closes_at: number;
  counted: number;
  rewarded: number;
}

const PENDING_COLUMNS = "decision_id, policy_id, project_id, env, org_id, arm_key, entity, features, reward_event, decided_at, closes_at, counted, rewarded";
const PENDING_KEY = "decision_id = ?1 AND policy_id = ?2 AND project_id = ?3 AND env = ?4";
const BIN_COLUMNS = "project_id, env, policy_id, arm_key, window_ms, at_ms, count";
/** Bound parameters per D1 statement stay under its limit of 100. */
const LOOKUP_CHUNK = 90;
/** Entities per entityArms statement: with its project, env and policy, under the same limit. */
const ENTITY_CHUNK = LOOKUP_CHUNK - 3;
const ARM_COLUMNS = "project_id, env, policy_id, entity, arm_key, stats";
/** The population's rows (entity ''), found through the partial index learned_population: its predicate written as the index's, so the planner matches it. */
export const POPULATION_ARMS = `SELECT ${ARM_COLUMNS} FROM learned_arms WHERE entity = ''`;

type D1ArmRow = { project_id: string; env: string; policy_id: string; entity: string; arm_key: string; stats: Blob };

const bytesOf = (values: Float64Array): Uint8Array => new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));

const bytesOfBlob = (blob: Blob): Uint8Array => (blob instanceof Uint8Array ? blob : new Uint8Array(blob as ArrayLike<number>));
const floatsOf = (blob: Blob): Float64Array => floats(bytesOfBlob(blob));

/** A row as D1 returns it: the features' BLOB as byte values. */
type D1PendingRow = Omit<PendingRow, "features"> & { features: Blob | null };

const fromD1ArmRow = (row: D1ArmRow): ArmRow => ({ projectId: row.project_id, env: row.env, policyId: row.policy_id, entity: row.entity, armKey: row.arm_key, stats: floatsOf(row.stats) });

const fromD1PendingRow = (row: D1PendingRow): PendingDecision => fromPendingRow({ ...row, features: row.features === null ? null : bytesOfBlob(row.features) });

export class D1LearningStore implements LearningStore {
  constructor(private readonly db: D1Database) {}

  async scan(afterSeq: number, limit: number, span: number): Promise<LearningScan> {
    const end = await this.db.prepare("SELECT coalesce(max(seq), 0) AS seq FROM events").first<{ seq: number }>();
    const upTo = Math.min(afterSeq + span, end?.seq ?? 0);
    const { results } = await this.db.prepare(scanSql({ after: "?1", upTo: "?2", limit: "?3" })).bind(afterSeq, upTo, limit).all<ScanRow>();
    return scanPage(results, afterSeq, upTo, limit);
  }

  async arms(): Promise<ArmRow[]> {
    const { results } = await this.db.prepare(`SELECT ${ARM_COLUMNS} FROM learned_arms`).all<D1ArmRow>();
    return results.map(fromD1ArmRow);
  }

  async populationArms(): Promise<ArmRow[]> {
    const { results } = await this.db.prepare(POPULATION_ARMS).all<D1ArmRow>();
    return results.map(fromD1ArmRow);
  }

  async entityArms(projectId: string, env: string, policyId: string, entities: readonly string[]): Promise<ArmRow[]> {
    const found: ArmRow[] = [];
    for (let at = 0; at < entities.length; at += ENTITY_CHUNK) {
      const chunk = entities.slice(at, at + ENTITY_CHUNK);
      const marks = chunk.map((_, i) => `?${i + 4}`).join(", ");
      const { results } = await this.db.prepare(`SELECT ${ARM_COLUMNS} FROM learned_arms WHERE project_id = ?1 AND env = ?2 AND policy_id = ?3 AND entity IN (${marks})`).bind(projectId, env, policyId, ...chunk).all<D1ArmRow>();
      for (const row of results) found.push(fromD1ArmRow(row));
    }
    return found;
  }

  async positions(): Promise<LearningPositions> {
    const row = await this.db
      .prepare(
        `SELECT (SELECT seq FROM checkpoints WHERE pipeline = ?1) AS learned, (SELECT seq FROM checkpoints WHERE pipeline = ?2) AS memory_from,
                (SELECT count(*) FROM pending_decisions) AS stored`,
      )
      .bind(LEARNED_CHECKPOINT, LEARNING_CHECKPOINT)
      .first<{ learned: number | null; memory_from: number | null; stored: number }>();
    const learned = row?.learned ?? 0;
    return { learned, memoryFrom: Math.min(row?.memory_from ?? 0, learned), stored: row?.stored ?? 0 };
  }

  async pendingFor(decisionIds: readonly string[]): Promise<PendingDecision[]> {
    const found: PendingDecision[] = [];
    for (let at = 0; at < decisionIds.length; at += LOOKUP_CHUNK) {
      const chunk = decisionIds.slice(at, at + LOOKUP_CHUNK);
      const marks = chunk.map((_, i) => `?${i + 1}`).join(", ");
      const { results } = await this.db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_decisions WHERE decision_id IN (${marks})`).bind(...chunk).all<D1PendingRow>();
      found.push(...results.map(fromD1PendingRow));
    }
    return found;
  }

  /** Bins as the delay model cuts them (delay.ts: W / bins wide), as on SQLite. */
  async openTrialBins(bins: number): Promise<OpenTrialBin[]> {
    const { results } = await this.db
      .prepare(
        `SELECT project_id, env, policy_id, arm_key, closes_at - decided_at AS window_ms, min(decided_at) AS at_ms, count(*) AS count
         FROM pending_decisions WHERE counted = 1
         GROUP BY project_id, env, policy_id, arm_key, window_ms, CAST(decided_at / max(1, (closes_at - decided_at) / CAST(?1 AS REAL)) AS INTEGER)`,
      )
      .bind(bins)
      .all<BinRow>();
    return results.map(fromBinRow);
  }

  async due(nowMs: number, limit: number): Promise<PendingDecision[]> {
    const { results } = await this.db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_decisions WHERE closes_at <= ?1 ORDER BY closes_at LIMIT ?2`).bind(nowMs, limit).all<D1PendingRow>();
    return results.map(fromD1PendingRow);
  }

  async commit(step: LearningCommit): Promise<void> {
    const key = (p: PendingKey) => [p.decisionId, p.policyId, p.projectId, p.env];
    const statements: D1PreparedStatement[] = [
      ...step.arms.map((arm) =>
        this.db
          .prepare(
            `INSERT INTO learned_arms (project_id, env, policy_id, entity, arm_key, stats) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (project_id, env, policy_id, entity, arm_key) DO UPDATE SET stats = excluded.stats`,
          )
          .bind(arm.projectId, arm.env, arm.policyId, arm.entity, arm.armKey, bytesOf(arm.stats)),
      ),
      ...step.removePending.map((p) => this.db.prepare(`DELETE FROM pending_decisions WHERE ${PENDING_KEY}`).bind(...key(p))),
      ...step.addPending.map((p) =>
        this.db
          .prepare(`INSERT OR REPLACE INTO pending_decisions (${PENDING_COLUMNS}) VALUES (${PENDING_COLUMNS.split(", ").map((_, i) => `?${i + 1}`).join(", ")})`)
          .bind(p.decisionId, p.policyId, p.projectId, p.env, p.orgId, p.armKey, p.entity, p.features ? bytesOf(p.features) : null, p.rewardEvent, p.decidedAt, p.closesAt, p.counted ? 1 : 0, p.rewarded ? 1 : 0),
      ),
      ...step.rewardPending.map((p) => this.db.prepare(`UPDATE pending_decisions SET rewarded = 1 WHERE ${PENDING_KEY}`).bind(...key(p))),
      this.setCheckpoint(LEARNED_CHECKPOINT, step.checkpoint),
      this.setCheckpoint(LEARNING_CHECKPOINT, step.memoryFrom),
    ];
    await this.db.batch(statements);
  }

  async publishOpenTrials({ upsert, remove, replace }: OpenTrialChanges): Promise<void> {
    const unpublish = "DELETE FROM published_open_trials WHERE project_id = ?1 AND env = ?2 AND policy_id = ?3 AND arm_key = ?4 AND at_ms = ?5";
    const publish = `INSERT INTO published_open_trials (${BIN_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
      ON CONFLICT (${PUBLISHED_KEY}) DO UPDATE SET window_ms = excluded.window_ms, count = excluded.count`;
    const statements = [
      ...(replace ? [this.db.prepare("DELETE FROM published_open_trials")] : []),
      ...remove.map((b) => this.db.prepare(unpublish).bind(b.projectId, b.env, b.policyId, b.armKey, b.atMs)),
      ...upsert.map((b) => this.db.prepare(publish).bind(b.projectId, b.env, b.policyId, b.armKey, b.windowMs, b.atMs, b.count)),
    ];
    if (statements.length > 0) await this.db.batch(statements);
  }

  async publishedOpenTrials(): Promise<OpenTrialBin[]> {
    const { results } = await this.db.prepare(`SELECT ${BIN_COLUMNS} FROM published_open_trials`).all<BinRow>();
    return results.map(fromBinRow);
  }

  private setCheckpoint(pipeline: string, seq: number): D1PreparedStatement {
    return this.db.prepare("INSERT INTO checkpoints (pipeline, seq) VALUES (?1, ?2) ON CONFLICT (pipeline) DO UPDATE SET seq = excluded.seq").bind(pipeline, seq);
  }
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
    counted: row.counted === 1,
    rewarded: row.rewarded === 1,
  };
}
