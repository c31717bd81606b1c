// The learner's tables: learned arm statistics and the adaptive decisions whose reward window is
// still open that the learner spilled out of its memory. A learning step commits in one
// transaction with its log positions, so after a crash the learner re-reads exactly the events
// whose effects were not stored. Its scan decodes the event log's rows in JavaScript into the
// records the feed makes (learning-records.ts): a row is one JSON.parse, ~2 µs an event, where
// SQLite's json_each expanded every event of the span and re-parsed its text per field (~76 µs).
import type { Database, Statement, Transaction } from "better-sqlite3";
import { type ArmRow, type ClosedCounted, type LearningCommit, type LeaseClaim, LeaseLost, type LearningPositions, type LearningScan, type LearningStore, type OpenTrialBin, type OpenTrialChanges, type PendingDecision, type PendingKey } from "../types.js";
import { type BinRow, floats, fromBinRow } from "../learning-rows.js";
import { logScanPage } from "../learning-records.js";
import { PENDING_ROW_COLUMNS, type PendingRowValues, pendingLayers, pendingRow, rewardMarks, sameDecisionEnd } from "./pending-rows.js";
import type { Durability } from "./wal-sync.js";
import { LogEvents } from "./log-events.js";

/**
 * The learner as a derived copy of the log (what retention reads): it may still need the events
 * after this seq, the oldest of which its in-memory pending decisions came from (a restart
 * re-reads them); at most its learned position.
 */
export const LEARNING_CHECKPOINT = "learning";
/** How far the learner has learned (before issue 15, LEARNING_CHECKPOINT said this). */
export const LEARNED_CHECKPOINT = "learning-read";
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

/** A spilled decision's key columns, and the layers read back. */
type PendingKeyValues = [decisionId: string, projectId: string, env: string];
type PendingLayersRow = [decisionId: string, projectId: string, env: string, layers: string];
const PENDING_ROW_KEY = "decision_id = ? AND project_id = ? AND env = ?";
const PENDING_LAYERS = "decision_id, project_id, env, layers";
/** A published bin's key (schema.ts, migration 11). */
export const PUBLISHED_KEY = "project_id, env, policy_id, arm_key, at_ms";

export class SqliteLearningStore implements LearningStore {
  private readonly armsStmt: Statement<[], ArmDbRow>;
  private readonly populationStmt: Statement<[], ArmDbRow>;
  private readonly entityChunkStmt: Statement<string[], ArmDbRow>;
  private readonly entityOneStmt: Statement<[string, string, string, string], ArmDbRow>;
  private readonly upsertArmStmt: Statement<[ArmDbRow]>;
  private readonly checkpointStmt: Statement<[string], number>;
  private readonly setCheckpointStmt: Statement<[string, number]>;
  private readonly insertPendingStmt: Statement<PendingRowValues>;
  private readonly replacePendingStmt: Statement<PendingRowValues>;
  private readonly deletePendingStmt: Statement<PendingKeyValues>;
  private readonly pendingRowStmt: Statement<PendingKeyValues, PendingLayersRow>;
  private readonly rewardPendingStmt: Statement<[unrewarded: string, rewarded: string, unrewarded: string, unrewarded: string, ...PendingKeyValues]>;
  private readonly binsStmt: Statement<{ bins: number }, BinRow>;
  private readonly countStmt: Statement<[], number>;
  private readonly pendingChunkStmt: Statement<string[], PendingLayersRow>;
  private readonly pendingOneStmt: Statement<[string], PendingLayersRow>;
  private readonly dueStmt: Statement<[number, number], PendingLayersRow>;
  private readonly closeCountedTx: Transaction<(nowMs: number, limit: number, lease: LeaseClaim | undefined) => [number, number][]>;
  private readonly commitTx: Transaction<(step: LearningCommit) => void>;
  private readonly log: LogEvents;

  private readonly clearPublishedStmt: Statement<[]>;
  private readonly publishStmt: Statement<[string, string, string, string, number, number, number]>;
  private readonly unpublishStmt: Statement<[string, string, string, string, number]>;
  private readonly publishedStmt: Statement<[], BinRow>;
  private readonly publishTx: Transaction<(changes: OpenTrialChanges) => void>;

  constructor(
    db: Database,
    private readonly durability: Durability,
    /** Inside the commit's transaction: whether the claim still holds its lease. */
    private readonly holds: (claim: LeaseClaim) => boolean,
  ) {
    this.armsStmt = db.prepare(`SELECT ${ARM_COLUMNS} FROM learned_arms`);
    this.populationStmt = db.prepare(POPULATION_ARMS);
    // By the primary key's prefix (project, env, policy, entity).
    const entityMarks = new Array(LOOKUP_CHUNK).fill("?").join(", ");
    this.entityChunkStmt = db.prepare(`SELECT ${ARM_COLUMNS} FROM learned_arms WHERE project_id = ? AND env = ? AND policy_id = ? AND entity IN (${entityMarks})`);
    this.entityOneStmt = db.prepare(`SELECT ${ARM_COLUMNS} FROM learned_arms WHERE project_id = ? AND env = ? AND policy_id = ? AND entity = ?`);
    this.upsertArmStmt = db.prepare(
      `INSERT INTO learned_arms (project_id, env, policy_id, entity, arm_key, stats)
       VALUES (@project_id, @env, @policy_id, @entity, @arm_key, @stats)
       ON CONFLICT (project_id, env, policy_id, entity, arm_key) DO UPDATE SET stats = excluded.stats`,
    );
    this.checkpointStmt = db.prepare<[string], number>("SELECT seq FROM checkpoints WHERE pipeline = ?").pluck();
    this.setCheckpointStmt = db.prepare(
      "INSERT INTO checkpoints (pipeline, seq) VALUES (?, ?) ON CONFLICT (pipeline) DO UPDATE SET seq = excluded.seq",
    );
    // A decision event's layers in one row (pending-rows.ts). Positional values, and rows read
    // back as arrays: a spilled decision is written and read once each, and named parameters and
    // row objects cost 20–30 % of that. The values go as arguments, not one array: better-sqlite3
    // reads an array's elements through V8's API, ~420 instructions each (callgrind), nor spread
    // from one, which the transaction's baseline code paid as much for (bench/past-bound.ts).
    // DO NOTHING: a row already there (the same decision spilled again, rare) is merged in
    // JavaScript instead (spillMerged).
    const values = PENDING_ROW_COLUMNS.split(", ").map(() => "?").join(", ");
    this.insertPendingStmt = db.prepare<PendingRowValues>(`INSERT INTO pending_decisions (${PENDING_ROW_COLUMNS}) VALUES (${values}) ON CONFLICT DO NOTHING`);
    this.replacePendingStmt = db.prepare<PendingRowValues>(`INSERT OR REPLACE INTO pending_decisions (${PENDING_ROW_COLUMNS}) VALUES (${values})`);
    this.deletePendingStmt = db.prepare(`DELETE FROM pending_decisions WHERE ${PENDING_ROW_KEY}`);
    this.pendingRowStmt = db.prepare<PendingKeyValues, PendingLayersRow>(`SELECT ${PENDING_LAYERS} FROM pending_decisions WHERE ${PENDING_ROW_KEY}`).raw();
    // A reward marks its policy's layer in the text (pending-rows.ts rewardMarks), no JSON parsed:
    // the row keeps its key and close time, so its index entry is not rewritten either (a late
    // reward is the common case past the bound).
    this.rewardPendingStmt = db.prepare(
      `UPDATE pending_decisions
       SET layers = replace(layers, ?, ?), unrewarded = unrewarded - (length(layers) - length(replace(layers, ?, ''))) / length(?)
       WHERE ${PENDING_ROW_KEY}`,
    );
    // Bins as the delay model cuts them (delay.ts: W / bins wide), so a restart adds counts, not
    // rows; a layer is [rewarded, policy, org, arm, entity, reward event, decided at, closes at, counted, …].
    this.binsStmt = db.prepare(
      `SELECT project_id, env, policy_id, arm_key, window_ms, min(decided_at) AS at_ms, count(*) AS count
       FROM (SELECT p.project_id, p.env, l.value ->> 1 AS policy_id, l.value ->> 3 AS arm_key, l.value ->> 6 AS decided_at, (l.value ->> 7) - (l.value ->> 6) AS window_ms
             FROM pending_decisions p, json_each(p.layers) l WHERE l.value ->> 8 = 1)
       GROUP BY project_id, env, policy_id, arm_key, window_ms, CAST(decided_at / max(1, window_ms / CAST(@bins AS REAL)) AS INTEGER)`,
    );
    this.countStmt = db.prepare<[], number>("SELECT coalesce(sum(layer_count), 0) FROM pending_decisions").pluck();
    const marks = new Array(LOOKUP_CHUNK).fill("?").join(", ");
    this.pendingChunkStmt = db.prepare<string[], PendingLayersRow>(`SELECT ${PENDING_LAYERS} FROM pending_decisions WHERE decision_id IN (${marks})`).raw();
    this.pendingOneStmt = db.prepare<[string], PendingLayersRow>(`SELECT ${PENDING_LAYERS} FROM pending_decisions WHERE decision_id = ?`).raw();
    this.dueStmt = db.prepare<[number, number], PendingLayersRow>(`SELECT ${PENDING_LAYERS} FROM pending_decisions WHERE closes_at <= ? ORDER BY closes_at LIMIT ?`).raw();
    // By the close-time index, as due reads them; each row's key is not bound, nor its layers read.
    const closeCounted = db
      .prepare<[number, number], [number, number]>(
        `DELETE FROM pending_decisions WHERE (decision_id, project_id, env) IN
           (SELECT decision_id, project_id, env FROM pending_decisions WHERE closes_at <= ? AND counted = 1 ORDER BY closes_at LIMIT ?)
         RETURNING layer_count, unrewarded`,
      )
      .raw();
    this.closeCountedTx = db.transaction((nowMs: number, limit: number, lease: LeaseClaim | undefined) => {
      if (lease !== undefined && !this.holds(lease)) throw new LeaseLost(lease);
      return closeCounted.all(nowMs, limit);
    });
    this.log = new LogEvents(db);
    this.clearPublishedStmt = db.prepare("DELETE FROM published_open_trials");
    this.publishStmt = db.prepare(
      `INSERT INTO published_open_trials (project_id, env, policy_id, arm_key, window_ms, at_ms, count) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (${PUBLISHED_KEY}) DO UPDATE SET window_ms = excluded.window_ms, count = excluded.count`,
    );
    this.unpublishStmt = db.prepare("DELETE FROM published_open_trials WHERE project_id = ? AND env = ? AND policy_id = ? AND arm_key = ? AND at_ms = ?");
    this.publishedStmt = db.prepare("SELECT project_id, env, policy_id, arm_key, window_ms, at_ms, count FROM published_open_trials");
    this.publishTx = db.transaction(({ upsert, remove, replace }: OpenTrialChanges) => {
      if (replace) this.clearPublishedStmt.run();
      for (const b of remove) this.unpublishStmt.run(b.projectId, b.env, b.policyId, b.armKey, b.atMs);
      for (const b of upsert) this.publishStmt.run(b.projectId, b.env, b.policyId, b.armKey, b.windowMs, b.atMs, b.count);
    });
    this.commitTx = db.transaction((step: LearningCommit) => {
      if (step.lease !== undefined && !this.holds(step.lease)) throw new LeaseLost(step.lease);
      for (const arm of step.arms) this.upsertArmStmt.run(toArmRow(arm));
      for (const p of step.removePending) this.changeLayers(p, (layers) => layers.filter((l) => l.policyId !== p.policyId));
      this.spill(step.addPending);
      for (const p of step.rewardPending) {
        const [unrewarded, rewarded] = rewardMarks(p.policyId);
        this.rewardPendingStmt.run(unrewarded, rewarded, unrewarded, unrewarded, p.decisionId, p.projectId, p.env);
      }
      this.setCheckpointStmt.run(LEARNED_CHECKPOINT, step.checkpoint);
      this.setCheckpointStmt.run(LEARNING_CHECKPOINT, step.memoryFrom);
    });
  }

  async scan(afterSeq: number, limit: number, span: number): Promise<LearningScan> {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
    // The end and the rows read on one connection with nothing between them: every seq up to
    // `upTo` is in the rows (appends only add rows past it).
    const upTo = Math.min(afterSeq + span, this.log.end());
    return logScanPage(this.log.rowsThrough(afterSeq, upTo), afterSeq, upTo, limit);
  }

  async arms(): Promise<ArmRow[]> {
    return this.armsStmt.all().map(fromArmDbRow);
  }

  async populationArms(): Promise<ArmRow[]> {
    return this.populationStmt.all().map(fromArmDbRow);
  }

  async entityArms(projectId: string, env: string, policyId: string, entities: readonly string[]): Promise<ArmRow[]> {
    const found: ArmRow[] = [];
    let at = 0;
    for (; at + LOOKUP_CHUNK <= entities.length; at += LOOKUP_CHUNK) {
      for (const row of this.entityChunkStmt.all(projectId, env, policyId, ...entities.slice(at, at + LOOKUP_CHUNK))) found.push(fromArmDbRow(row));
    }
    for (; at < entities.length; at++) for (const row of this.entityOneStmt.all(projectId, env, policyId, entities[at]!)) found.push(fromArmDbRow(row));
    return found;
  }

  async positions(): Promise<LearningPositions> {
    const read = this.checkpointStmt.get(LEARNED_CHECKPOINT);
    const first = this.checkpointStmt.get(LEARNING_CHECKPOINT) ?? 0;
    // A store from before the in-memory pending decisions: "learning" was the learned position,
    // and every pending decision is in the table.
    if (read === undefined) return { learned: first, memoryFrom: first, stored: this.countStmt.get() ?? 0 };
    return { learned: read, memoryFrom: Math.min(first, read), stored: this.countStmt.get() ?? 0 };
  }

  async pendingFor(decisionIds: readonly string[]): Promise<PendingDecision[]> {
    const found: PendingDecision[] = [];
    let at = 0;
    for (; at + LOOKUP_CHUNK <= decisionIds.length; at += LOOKUP_CHUNK) {
      for (const row of this.pendingChunkStmt.all(...decisionIds.slice(at, at + LOOKUP_CHUNK))) found.push(...pendingLayers(...row));
    }
    for (; at < decisionIds.length; at++) for (const row of this.pendingOneStmt.all(decisionIds[at]!)) found.push(...pendingLayers(...row));
    return found;
  }

  async openTrialBins(bins: number): Promise<OpenTrialBin[]> {
    return this.binsStmt.all({ bins }).map(fromBinRow);
  }

  async publishOpenTrials(changes: OpenTrialChanges): Promise<void> {
    await this.durability.write(() => this.publishTx.immediate(changes));
  }

  async publishedOpenTrials(): Promise<OpenTrialBin[]> {
    return this.publishedStmt.all().map(fromBinRow);
  }

  /** Every layer of up to `limit` rows (a row is due once its last layer is). */
  async due(nowMs: number, limit: number): Promise<PendingDecision[]> {
    return this.dueStmt.all(nowMs, limit).flatMap((row) => pendingLayers(...row));
  }

  async closeCounted(nowMs: number, limit: number, lease: LeaseClaim | undefined): Promise<ClosedCounted> {
    const rows = await this.durability.write(() => this.closeCountedTx(nowMs, limit, lease));
    this.durability.sync().catch(() => undefined); // as commit's: the closes are derived from the log
    let closed = 0;
    let unrewarded = 0;
    for (const [layers, open] of rows) {
      closed += layers;
      unrewarded += open;
    }
    return { closed, unrewarded };
  }

  async commit(step: LearningCommit): Promise<void> {
    await this.durability.write(() => this.commitTx(step));
    // Not waited for: the learner's state derives from the log, and a step lost in a power cut
    // goes with its checkpoint (one transaction), so it is learned again from the durable events.
    // A process crash loses nothing committed. The sync only keeps the WAL from staying unsynced.
    this.durability.sync().catch(() => undefined);
  }

  /** Spilled decisions, a row per decision event (the learner spills an event's layers together). */
  private spill(layers: readonly PendingDecision[]): void {
    for (let from = 0, to: number; from < layers.length; from = to) {
      to = sameDecisionEnd(layers, from);
      const row = pendingRow(layers, from, to);
      if (this.insertPendingStmt.run(...row).changes === 0) this.spillMerged(layers.slice(from, to));
    }
  }

  /**
   * A decision whose row is there already (a repeat that brought another layer, spilled later):
   * its layers join the row, a layer of the same policy replacing the stored one as a new pending
   * decision does.
   */
  private spillMerged(layers: readonly PendingDecision[]): void {
    this.changeLayers(layers[0]!, (stored) => [...stored.filter((s) => !layers.some((l) => l.policyId === s.policyId)), ...layers]);
  }

  /** Rewrites a stored decision's layers (a close through due, a merge); the row goes with its last layer. */
  private changeLayers(key: PendingKey, change: (layers: PendingDecision[]) => PendingDecision[]): void {
    const row = this.pendingRowStmt.get(key.decisionId, key.projectId, key.env);
    if (row === undefined) return;
    const layers = change(pendingLayers(...row));
    if (layers.length === 0) this.deletePendingStmt.run(key.decisionId, key.projectId, key.env);
    else this.replacePendingStmt.run(...pendingRow(layers));
  }
}

function bytes(values: Float64Array): Buffer {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
}

const ARM_COLUMNS = "project_id, env, policy_id, entity, arm_key, stats";
/** The population's rows (entity ''), found through the partial index learned_population: its predicate written as the index's, so the planner matches it. */
export const POPULATION_ARMS = `SELECT ${ARM_COLUMNS} FROM learned_arms WHERE entity = ''`;

function fromArmDbRow(row: ArmDbRow): ArmRow {
  return { projectId: row.project_id, env: row.env, policyId: row.policy_id, entity: row.entity, armKey: row.arm_key, stats: floats(row.stats) };
}

function toArmRow(arm: ArmRow): ArmDbRow {
  return { project_id: arm.projectId, env: arm.env, policy_id: arm.policyId, entity: arm.entity, arm_key: arm.armKey, stats: bytes(arm.stats) };
}
