// A spilled decision's row (schema.ts, migration 12): one row per decision event and tenant, its
// adaptive layers packed in one JSON text, so a spill inserts and a close deletes one row through
// the table's two B-trees however many layers the decision has (two rows of four keyed texts each
// for a resolve of two adaptive layers before). The row keeps what closing and counting need
// without reading the layers: its last layer's close time, whether every layer counted as a
// trial, how many layers and how many unrewarded.
import type { PendingDecision } from "../types.js";
import { floats } from "../learning-rows.js";

/**
 * A layer in the row's JSON, in this order (migration 12 writes the same with SQL): [rewarded 0|1,
 * policy_id, org_id, arm_key, entity, reward_event, decided_at, closes_at, counted 0|1, features
 * as hex of the Float64Array's bytes | null]. Rewarded comes first so a reward is a replace of
 * `[0,"policy",` by `[1,"policy",` in the text (rewardMarks), which no other place in it can match:
 * a quote inside a JSON string is escaped.
 */
type StoredLayer = [number, string, string, string, string, string, number, number, number, string | null];

/** A row's values in the insert's order (PENDING_ROW_COLUMNS). */
export type PendingRowValues = [decisionId: string, projectId: string, env: string, closesAt: number, counted: number, layerCount: number, unrewarded: number, layers: string];

export const PENDING_ROW_COLUMNS = "decision_id, project_id, env, closes_at, counted, layer_count, unrewarded, layers";

/** The row of `layers[from, to)`, all of one decision id, project and env. */
export function pendingRow(layers: readonly PendingDecision[], from = 0, to = layers.length): PendingRowValues {
  const first = layers[from]!;
  const stored: StoredLayer[] = [];
  let closesAt = first.closesAt;
  let counted = 1;
  let unrewarded = 0;
  for (let i = from; i < to; i++) {
    const p = layers[i]!;
    if (p.closesAt > closesAt) closesAt = p.closesAt;
    if (!p.counted) counted = 0;
    if (!p.rewarded) unrewarded++;
    const features = p.features ? Buffer.from(p.features.buffer, p.features.byteOffset, p.features.byteLength).toString("hex") : null;
    stored.push([p.rewarded ? 1 : 0, p.policyId, p.orgId, p.armKey, p.entity, p.rewardEvent, p.decidedAt, p.closesAt, p.counted ? 1 : 0, features]);
  }
  return [first.decisionId, first.projectId, first.env, closesAt, counted, to - from, unrewarded, JSON.stringify(stored)];
}

/** A row's layers as pending decisions. */
export function pendingLayers(decisionId: string, projectId: string, env: string, layers: string): PendingDecision[] {
  return (JSON.parse(layers) as StoredLayer[]).map(([rewarded, policyId, orgId, armKey, entity, rewardEvent, decidedAt, closesAt, counted, features]) => ({
    decisionId,
    policyId,
    orgId,
    projectId,
    env,
    armKey,
    entity,
    features: features === null ? undefined : floats(Buffer.from(features, "hex")),
    rewardEvent,
    decidedAt,
    closesAt,
    counted: counted === 1,
    rewarded: rewarded === 1,
  }));
}

/** The end of the run of layers from `from` with its decision id, project and env (a decision event's layers are spilled together). */
export function sameDecisionEnd(layers: readonly PendingDecision[], from: number): number {
  const first = layers[from]!;
  let to = from + 1;
  while (to < layers.length && layers[to]!.decisionId === first.decisionId && layers[to]!.projectId === first.projectId && layers[to]!.env === first.env) to++;
  return to;
}

/** What a reward of the policy's layer replaces in the row's JSON, and with what. */
export function rewardMarks(policyId: string): [unrewarded: string, rewarded: string] {
  const quoted = JSON.stringify(policyId);
  return [`[0,${quoted},`, `[1,${quoted},`];
}
