// The decision event every resolution records (runtime-api.md "Decision event"), with the tenant
// and the LayerAssignment fields warehouses match on (policyKey, allocationKey, probability).
import type { LayerResolution, Resolution } from "../bundle/resolve.js";
import { layerAssignment } from "../bundle/response.js";
import type { StoredEvent } from "../store/types.js";
import { uuidv7 } from "../ids/uuidv7.js";

export interface DecisionSource {
  readonly decisionId: string;
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly configVersion: string;
  /** Time of the decision: ms since the epoch, and as ISO 8601. */
  readonly nowMs: number;
  readonly timestamp: string;
  readonly latencyMs: number;
}

/** A decision event says also which layers were resolved only for attribution. */
function decidedLayer(layer: LayerResolution): Record<string, unknown> {
  // Added to the fresh object, not spread into a new one: a spread followed by more properties costs microseconds.
  const decided = layerAssignment(layer);
  decided.attributionOnly = layer.attributionOnly;
  return decided;
}

/** The stored form; undefined fields vanish when the store serializes the body. */
export function decisionEvent(resolution: Resolution, source: DecisionSource, unitKey: string): StoredEvent {
  const body = {
      type: "decision",
      unitKey,
      timestamp: source.timestamp,
      assignments: resolution.assignments,
      layers: resolution.layers.map(decidedLayer),
      latencyMs: source.latencyMs,
      decisionId: source.decisionId,
      configVersion: source.configVersion,
      orgId: source.orgId,
      projectId: source.projectId,
      env: source.env,
      filteredContext: resolution.filteredContext,
  };
  return {
    id: uuidv7(source.nowMs),
    receivedAt: source.timestamp,
    orgId: source.orgId,
    projectId: source.projectId,
    env: source.env,
    type: "decision",
    unitKey,
    timestamp: source.timestamp,
    decisionId: source.decisionId,
    body,
  };
}
