// The learner's rows as the stores return them, turned into the records the learner reads: the
// scan's rows (D1 and PostgreSQL extract the same columns from their per-event tables; the
// embedded store decodes its log's rows instead, learning-records.ts), open-trial bins, and
// learned statistics stored as bytes.
import type { DecidedArm, LearningEvent, LearningScan, OpenTrialBin } from "./types.js";

/** One row per adaptive layer of a decision or exposure, one per track event. */
export interface ScanRow {
  seq: number;
  type: "decision" | "exposure" | "track";
  org_id: string;
  project_id: string;
  env: string;
  decision_id: string;
  received_at: string;
  name: string | null;
  /** A track event's numeric value (PostgreSQL gives numeric as text: any JSON number fits). */
  value: number | string | null;
  policy_id: string | null;
  arm_key: string | null;
  entity_id: string | null;
  /** JSON arrays and objects, as text. */
  features: string | null;
  filtered: string | null;
}

/**
 * D1's scan, with its placeholders, over its per-event table. The filter and the extraction run
 * in SQLite next to the data: other track events and static-only decisions and exposures never
 * cross the network, and no body is parsed in JavaScript: a decision comes as one row per
 * adaptive layer (policy and arm), a track event with its value.
 */
export function scanSql(at: { readonly after: string; readonly upTo: string; readonly limit: string }): string {
  return `SELECT e.seq, e.type, e.org_id, e.project_id, e.env, e.decision_id, e.received_at, e.name,
              CASE WHEN e.type = 'track' AND json_type(e.body, '$.value') IN ('integer', 'real') THEN e.body ->> '$.value' END AS value,
              l.value ->> '$.policyId' AS policy_id, l.value ->> '$.allocationKey' AS arm_key,
              CASE WHEN e.type != 'track' AND json_type(e.body, '$.entityId') = 'text' THEN e.body ->> '$.entityId' END AS entity_id,
              CASE WHEN e.type != 'track' AND json_type(e.body, '$.features') = 'array' THEN e.body -> '$.features' END AS features,
              CASE WHEN e.type != 'track' AND json_type(e.body, '$.filteredContext') = 'object' THEN e.body -> '$.filteredContext' END AS filtered
       FROM events e
       LEFT JOIN json_each(CASE WHEN e.type != 'track' AND instr(e.body, '"probability"') > 0 THEN e.body END, '$.layers') l
       WHERE e.seq > ${at.after} AND e.seq <= ${at.upTo} AND e.decision_id IS NOT NULL
         AND (e.type = 'track'
              OR (e.type IN ('decision', 'exposure') AND l.type = 'object'
                  AND json_type(l.value, '$.probability') IS NOT NULL
                  AND json_type(l.value, '$.attributionOnly') IS NOT 'true'
                  AND json_type(l.value, '$.policyId') = 'text' AND json_type(l.value, '$.allocationKey') = 'text'))
       ORDER BY e.seq LIMIT ${at.limit}`;
}

export interface BinRow {
  project_id: string;
  env: string;
  policy_id: string;
  arm_key: string;
  window_ms: number;
  at_ms: number;
  count: number;
}

export function fromBinRow(row: BinRow): OpenTrialBin {
  return { projectId: row.project_id, env: row.env, policyId: row.policy_id, armKey: row.arm_key, windowMs: row.window_ms, atMs: row.at_ms, count: row.count };
}

/** A copy: a driver's Buffer may not be 8-byte aligned for a Float64Array view. */
export function floats(blob: Uint8Array): Float64Array {
  const out = new Float64Array(blob.byteLength / 8);
  new Uint8Array(out.buffer).set(blob);
  return out;
}

/**
 * A scan's page: the rows of seqs (afterSeq, upTo], at most `limit`, as records, and how far they
 * cover the log. When the limit cut in, the last event's rows may be incomplete (a decision has a
 * row per adaptive layer), so that event is left to the next scan.
 */
export function scanPage(rows: ScanRow[], afterSeq: number, upTo: number, limit: number): LearningScan {
  let through = Math.max(afterSeq, upTo);
  if (rows.length === limit && limit > 0) {
    const last = rows[rows.length - 1]!.seq;
    let end = rows.length;
    while (end > 0 && rows[end - 1]!.seq === last) end--;
    if (end > 0) rows.length = end;
    through = rows[rows.length - 1]!.seq;
  }
  return { events: toLearningEvents(rows), through };
}

/** Rows to records: a decision's rows (one per adaptive layer) are adjacent. */
function toLearningEvents(rows: readonly ScanRow[]): LearningEvent[] {
  const events: LearningEvent[] = [];
  for (let i = 0; i < rows.length; ) {
    const row = rows[i]!;
    if (row.type === "track") {
      const value = row.value === null ? undefined : Number(row.value);
      events.push({
        seq: row.seq,
        type: "track",
        orgId: row.org_id,
        projectId: row.project_id,
        env: row.env,
        decisionId: row.decision_id,
        receivedAt: row.received_at,
        name: row.name ?? "",
        value: value !== undefined && Number.isFinite(value) ? value : undefined,
      });
      i++;
      continue;
    }
    const arms: DecidedArm[] = [];
    for (; i < rows.length && rows[i]!.seq === row.seq; i++) arms.push({ policyId: rows[i]!.policy_id!, armKey: rows[i]!.arm_key! });
    events.push(new ScannedDecision(row, arms));
  }
  return events;
}

/** A scanned decision; the small JSON parts are parsed only when read (the learner rarely needs them). */
class ScannedDecision {
  readonly seq: number;
  readonly type: "decision" | "exposure";
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly decisionId: string;
  readonly receivedAt: string;
  readonly entityId: string | undefined;
  readonly minted = false; // a scan does not know who made the event
  private parsedFeatures: readonly unknown[] | undefined | null = null;
  private parsedFiltered: Readonly<Record<string, unknown>> | undefined | null = null;

  constructor(
    private readonly row: ScanRow,
    readonly arms: readonly DecidedArm[],
  ) {
    this.seq = row.seq;
    this.type = row.type as "decision" | "exposure";
    this.orgId = row.org_id;
    this.projectId = row.project_id;
    this.env = row.env;
    this.decisionId = row.decision_id;
    this.receivedAt = row.received_at;
    this.entityId = row.entity_id === null || row.entity_id === "" ? undefined : row.entity_id;
  }

  get features(): readonly unknown[] | undefined {
    if (this.parsedFeatures === null) this.parsedFeatures = this.row.features === null ? undefined : (JSON.parse(this.row.features) as unknown[]);
    return this.parsedFeatures;
  }

  get filteredContext(): Readonly<Record<string, unknown>> | undefined {
    if (this.parsedFiltered === null) this.parsedFiltered = this.row.filtered === null ? undefined : (JSON.parse(this.row.filtered) as Record<string, unknown>);
    return this.parsedFiltered;
  }
}
