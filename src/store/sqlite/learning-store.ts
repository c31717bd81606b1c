// The learner's tables: learned arm statistics and the adaptive decisions whose reward window is
// still open. A learning step commits in one transaction with its log checkpoint, so after a crash
// the learner re-reads exactly the events whose effects were not stored.
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { ArmRow, LearningCommit, LearningEvent, LearningScan, LearningStore, PendingDecision } from "../types.js";
import type { Durability } from "./wal-sync.js";

export const LEARNING_CHECKPOINT = "learning";
/** SQLite's default limit on bound parameters is 32766; stay well under it. */
const LOOKUP_CHUNK = 500;

interface ArmDbRow {
  project_id: string;
  env: string;
  policy_id: string;
  entity: string;
  arm_key: string;
  stats: Buffer;
}

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
  counted: number;
  rewarded: number;
}

interface ScanRow {
  seq: number;
  type: "decision" | "exposure" | "track";
  org_id: string;
  project_id: string;
  env: string;
  decision_id: string;
  received_at: string;
  name: string | null;
  /** A decision's or exposure's body; null for a track event. */
  body: string | null;
  /** A track event's numeric value. */
  value: number | null;
}

const PENDING_COLUMNS = "decision_id, policy_id, project_id, env, org_id, arm_key, entity, features, reward_event, decided_at, closes_at, counted, rewarded";
const PENDING_KEY = "decision_id = ? AND policy_id = ? AND project_id = ? AND env = ?";

export class SqliteLearningStore implements LearningStore {
  private readonly armsStmt: Statement<[], ArmDbRow>;
  private readonly upsertArmStmt: Statement<[ArmDbRow]>;
  private readonly checkpointStmt: Statement<[string], number>;
  private readonly setCheckpointStmt: Statement<[string, number]>;
  private readonly insertPendingStmt: Statement<[PendingRow]>;
  private readonly deletePendingStmt: Statement<[string, string, string, string]>;
  private readonly rewardPendingStmt: Statement<[string, string, string, string]>;
  private readonly openStmt: Statement<[], PendingRow>;
  private readonly pendingChunkStmt: Statement<string[], PendingRow>;
  private readonly pendingOneStmt: Statement<[string], PendingRow>;
  private readonly dueStmt: Statement<[number, number], PendingRow>;
  private readonly commitTx: Transaction<(step: LearningCommit) => void>;
  private readonly scanStmt: Statement<{ after: number; upTo: number; limit: number }, ScanRow>;
  private readonly maxSeqStmt: Statement<[], number>;

  constructor(
    db: Database,
    private readonly durability: Durability,
  ) {
    this.armsStmt = db.prepare("SELECT project_id, env, policy_id, entity, arm_key, stats FROM learned_arms");
    this.upsertArmStmt = db.prepare(
      `INSERT INTO learned_arms (project_id, env, policy_id, entity, arm_key, stats)
       VALUES (@project_id, @env, @policy_id, @entity, @arm_key, @stats)
       ON CONFLICT (project_id, env, policy_id, entity, arm_key) DO UPDATE SET stats = excluded.stats`,
    );
    this.checkpointStmt = db.prepare<[string], number>("SELECT seq FROM checkpoints WHERE pipeline = ?").pluck();
    this.setCheckpointStmt = db.prepare(
      "INSERT INTO checkpoints (pipeline, seq) VALUES (?, ?) ON CONFLICT (pipeline) DO UPDATE SET seq = excluded.seq",
    );
    const params = PENDING_COLUMNS.split(", ").map((c) => `@${c}`).join(", ");
    // OR IGNORE: a decision re-read after a crash between commit and memory is already pending.
    this.insertPendingStmt = db.prepare(`INSERT OR IGNORE INTO pending_decisions (${PENDING_COLUMNS}) VALUES (${params})`);
    this.deletePendingStmt = db.prepare(`DELETE FROM pending_decisions WHERE ${PENDING_KEY}`);
    this.rewardPendingStmt = db.prepare(`UPDATE pending_decisions SET rewarded = 1 WHERE ${PENDING_KEY}`);
    this.openStmt = db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_decisions WHERE counted = 1`);
    const marks = new Array(LOOKUP_CHUNK).fill("?").join(", ");
    this.pendingChunkStmt = db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_decisions WHERE decision_id IN (${marks})`);
    this.pendingOneStmt = db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_decisions WHERE decision_id = ?`);
    this.dueStmt = db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_decisions WHERE closes_at <= ? ORDER BY closes_at LIMIT ?`);
    // The filter runs in SQLite: other track events and static-only decisions and exposures never
    // become JavaScript objects, and a track event's body is never parsed (only its value).
    this.scanStmt = db.prepare(
      `SELECT seq, type, org_id, project_id, env, decision_id, received_at, name,
              CASE WHEN type != 'track' THEN body END AS body,
              CASE WHEN type = 'track' THEN json_extract(body, '$.value') END AS value
       FROM events
       WHERE seq > @after AND seq <= @upTo AND decision_id IS NOT NULL
         AND ((type IN ('decision', 'exposure') AND instr(body, '"probability"') > 0) OR type = 'track')
       ORDER BY seq LIMIT @limit`,
    );
    this.maxSeqStmt = db.prepare<[], number>("SELECT coalesce(max(seq), 0) FROM events").pluck();
    this.commitTx = db.transaction((step: LearningCommit) => {
      for (const arm of step.arms) this.upsertArmStmt.run(toArmRow(arm));
      for (const p of step.removePending) this.deletePendingStmt.run(p.decisionId, p.policyId, p.projectId, p.env);
      for (const p of step.addPending) this.insertPendingStmt.run(toPendingRow(p));
      for (const p of step.rewardPending) this.rewardPendingStmt.run(p.decisionId, p.policyId, p.projectId, p.env);
      this.setCheckpointStmt.run(LEARNING_CHECKPOINT, step.checkpoint);
    });
  }

  async scan(afterSeq: number, limit: number, span: number): Promise<LearningScan> {
    // Both reads on one connection with nothing between them: the same snapshot of the log.
    const upTo = Math.min(afterSeq + span, this.maxSeqStmt.get() ?? 0);
    const rows = this.scanStmt.all({ after: afterSeq, upTo, limit });
    const through = rows.length === limit ? rows[rows.length - 1]!.seq : Math.max(afterSeq, upTo);
    return { events: rows.map(toLearningEvent), through };
  }

  async arms(): Promise<ArmRow[]> {
    return this.armsStmt.all().map((row) => ({
      projectId: row.project_id,
      env: row.env,
      policyId: row.policy_id,
      entity: row.entity,
      armKey: row.arm_key,
      stats: floats(row.stats),
    }));
  }

  async checkpoint(): Promise<number> {
    return this.checkpointStmt.get(LEARNING_CHECKPOINT) ?? 0;
  }

  async pendingFor(decisionIds: readonly string[]): Promise<PendingDecision[]> {
    const found: PendingDecision[] = [];
    let at = 0;
    for (; at + LOOKUP_CHUNK <= decisionIds.length; at += LOOKUP_CHUNK) {
      for (const row of this.pendingChunkStmt.all(...decisionIds.slice(at, at + LOOKUP_CHUNK))) found.push(fromPendingRow(row));
    }
    for (; at < decisionIds.length; at++) for (const row of this.pendingOneStmt.all(decisionIds[at]!)) found.push(fromPendingRow(row));
    return found;
  }

  async openTrials(): Promise<PendingDecision[]> {
    return this.openStmt.all().map(fromPendingRow);
  }

  async due(nowMs: number, limit: number): Promise<PendingDecision[]> {
    return this.dueStmt.all(nowMs, limit).map(fromPendingRow);
  }

  async commit(step: LearningCommit): Promise<void> {
    await this.durability.commit(() => this.commitTx(step));
  }
}

function toLearningEvent(row: ScanRow): LearningEvent {
  const common = { seq: row.seq, orgId: row.org_id, projectId: row.project_id, env: row.env, decisionId: row.decision_id, receivedAt: row.received_at };
  if (row.type !== "track") return { ...common, type: row.type, body: JSON.parse(row.body!) as Record<string, unknown> };
  return { ...common, type: "track", name: row.name ?? "", value: typeof row.value === "number" && Number.isFinite(row.value) ? row.value : undefined };
}

function bytes(values: Float64Array): Buffer {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
}

/** A copy: better-sqlite3's Buffer may not be 8-byte aligned for a Float64Array view. */
function floats(blob: Buffer): Float64Array {
  const out = new Float64Array(blob.byteLength / 8);
  new Uint8Array(out.buffer).set(blob);
  return out;
}

function toArmRow(arm: ArmRow): ArmDbRow {
  return { project_id: arm.projectId, env: arm.env, policy_id: arm.policyId, entity: arm.entity, arm_key: arm.armKey, stats: bytes(arm.stats) };
}

function toPendingRow(p: PendingDecision): PendingRow {
  return {
    decision_id: p.decisionId,
    policy_id: p.policyId,
    project_id: p.projectId,
    env: p.env,
    org_id: p.orgId,
    arm_key: p.armKey,
    entity: p.entity,
    features: p.features ? bytes(p.features) : null,
    reward_event: p.rewardEvent,
    decided_at: p.decidedAt,
    closes_at: p.closesAt,
    counted: p.counted ? 1 : 0,
    rewarded: p.rewarded ? 1 : 0,
  };
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
