// The decision event every resolution records (runtime-api.md "Decision event"), with the tenant
// and the LayerAssignment fields warehouses match on (policyKey, allocationKey, probability).
import type { Resolution } from "../bundle/resolve.js";
import { MINTED_DECISION, type StoredEvent } from "../store/types.js";
import { uuidv7 } from "../ids/uuidv7.js";
import { isoTime as writeIsoTime } from "./events/iso-time.js";

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

/**
 * The stored form; undefined fields vanish when the store serializes the body. Its layers are the
 * resolution's own: a LayerResolution holds exactly the contract's LayerAssignment (response.ts
 * layerAssignment) and whether the layer was resolved only for attribution, in that order.
 */
export function decisionEvent(resolution: Resolution, source: DecisionSource, unitKey: string): StoredEvent {
  const body = {
      type: "decision",
      unitKey,
      timestamp: source.timestamp,
      assignments: resolution.assignments,
      layers: resolution.layers,
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
    [MINTED_DECISION]: true, // its id was minted for it (resolution.ts): the learner looks it up nowhere
  };
}

/**
 * `ms` as ISO 8601, made once per millisecond: under load a millisecond holds several decisions.
 * Written by arithmetic (events/iso-time.ts): toISOString formats through snprintf, ~7.7 k
 * instructions a call, 2 % of a resolve's event loop when each decision has a millisecond of its own.
 */
export function isoTime(ms: number): string {
  if (ms !== isoMs) {
    iso = writeIsoTime(ms);
    isoMs = ms;
  }
  return iso;
}

let isoMs = Number.NaN;
let iso = "";
