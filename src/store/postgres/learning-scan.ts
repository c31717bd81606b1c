// The learner's scan of the log: PostgreSQL filters the events and extracts compact records from
// their jsonb bodies, so other track events and static-only decisions never reach JavaScript, and
// JavaScript parses no JSON (bar a decision's features or filteredContext, when the learner reads
// them). A decision comes as one row per adaptive layer (policy and arm), a track event with its value.
import type pg from "pg";
import { type ScanRow, scanPage } from "../learning-rows.js";
import type { LearningScan } from "../types.js";
import { read } from "./db.js";

export async function scanLearningEvents(pool: pg.Pool, afterSeq: number, limit: number, span: number): Promise<LearningScan> {
  // Every seq up to the head is committed (appends take seqs in commit order), so the scan that
  // follows sees all of them.
  const [head] = await read<{ seq: number }>(pool, "SELECT seq FROM event_head");
  const upTo = Math.min(afterSeq + span, head!.seq);
  const rows = await read<ScanRow>(
    pool,
    `SELECT e.seq, e.type, e.org_id, e.project_id, e.env, e.decision_id, e.received_at, e.name,
           CASE WHEN e.type = 'track' AND jsonb_typeof(e.body -> 'value') = 'number' THEN (e.body ->> 'value')::numeric END AS value,
           l.layer ->> 'policyId' AS policy_id, l.layer ->> 'allocationKey' AS arm_key,
           CASE WHEN e.type <> 'track' AND jsonb_typeof(e.body -> 'entityId') = 'string' THEN e.body ->> 'entityId' END AS entity_id,
           CASE WHEN e.type <> 'track' AND jsonb_typeof(e.body -> 'features') = 'array' THEN (e.body -> 'features')::text END AS features,
           CASE WHEN e.type <> 'track' AND jsonb_typeof(e.body -> 'filteredContext') = 'object' THEN (e.body -> 'filteredContext')::text END AS filtered
    FROM events e
    LEFT JOIN LATERAL jsonb_array_elements(
      CASE WHEN e.type <> 'track' AND jsonb_typeof(e.body -> 'layers') = 'array' THEN e.body -> 'layers' END) AS l(layer) ON true
    WHERE e.seq > $1 AND e.seq <= $2 AND e.decision_id IS NOT NULL
      AND (e.type = 'track'
           OR (e.type IN ('decision', 'exposure') AND jsonb_typeof(l.layer) = 'object'
               AND l.layer ? 'probability'
               AND (l.layer -> 'attributionOnly') IS DISTINCT FROM 'true'::jsonb
               AND jsonb_typeof(l.layer -> 'policyId') = 'string' AND jsonb_typeof(l.layer -> 'allocationKey') = 'string'))
    ORDER BY e.seq LIMIT $3`,
    [afterSeq, upTo, limit],
  );
  return scanPage(rows, afterSeq, upTo, limit);
}
