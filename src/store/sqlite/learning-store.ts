// The learner's state: learned arm statistics and its positions (checkpoints). A learning step
// commits its statistics and positions in one transaction, so after a crash the learner re-reads
// exactly the events whose effects were not stored. Its scan reads the events table.
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { ArmRow, LearningCommit, LearningEvent, LearningPositions, LearningScan, LearningStore } from "../types.js";
import type { Durability } from "./wal-sync.js";

/** The positions, as rows of the checkpoints table. */
const POSITIONS = { learned: "learning", pendingAfter: "learning-pending-after", closedThrough: "learning-closed-through" } as const;

interface ArmDbRow {
  project_id: string;
  env: string;
  policy_id: string;
  entity: string;
  arm_key: string;
  stats: Buffer;
}


interface ScanRow {
  seq: number;
  type: "decision" | "track";
  project_id: string;
  env: string;
  decision_id: string;
  received_at: string;
  name: string | null;
  /** A decision's body; null for a track event. */
  body: string | null;
  /** A track event's numeric value. */
  value: number | null;
}


export class SqliteLearningStore implements LearningStore {
  private readonly armsStmt: Statement<[], ArmDbRow>;
  private readonly upsertArmStmt: Statement<[ArmDbRow]>;
  private readonly checkpointStmt: Statement<[string], number>;
  private readonly setCheckpointStmt: Statement<[string, number]>;
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
    // The filter runs in SQLite: exposures, other track events and static-only decisions never
    // become JavaScript objects, and a track event's body is never parsed (only its value).
    this.scanStmt = db.prepare(
      `SELECT seq, type, project_id, env, decision_id, received_at, name,
              CASE WHEN type = 'decision' THEN body END AS body,
              CASE WHEN type = 'track' THEN json_extract(body, '$.value') END AS value
       FROM events
       WHERE seq > @after AND seq <= @upTo AND decision_id IS NOT NULL
         AND ((type = 'decision' AND instr(body, '"probability"') > 0) OR type = 'track')
       ORDER BY seq LIMIT @limit`,
    );
    this.maxSeqStmt = db.prepare<[], number>("SELECT coalesce(max(seq), 0) FROM events").pluck();
    this.commitTx = db.transaction((step: LearningCommit) => {
      for (const arm of step.arms) this.upsertArmStmt.run(toArmRow(arm));
      for (const key of Object.keys(POSITIONS) as (keyof LearningPositions)[]) this.setCheckpointStmt.run(POSITIONS[key], step[key]);
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

  async positions(): Promise<LearningPositions> {
    const learned = this.checkpointStmt.get(POSITIONS.learned) ?? 0;
    return {
      learned,
      pendingAfter: this.checkpointStmt.get(POSITIONS.pendingAfter) ?? learned,
      closedThrough: this.checkpointStmt.get(POSITIONS.closedThrough) ?? 0,
    };
  }

  async commit(step: LearningCommit): Promise<void> {
    this.commitTx(step);
    await this.durability.sync();
  }
}

function toLearningEvent(row: ScanRow): LearningEvent {
  const common = { seq: row.seq, projectId: row.project_id, env: row.env, decisionId: row.decision_id, receivedAt: row.received_at };
  if (row.type === "decision") return { ...common, type: "decision", body: JSON.parse(row.body!) as Record<string, unknown> };
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
