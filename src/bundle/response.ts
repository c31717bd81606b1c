// The POST /v1/resolve 200 body (runtime-api.md "POST /v1/resolve") shaped from a Resolution: one
// function for the server's answer and the SDK's local one, so the two cannot drift apart.
// Fields that do not apply are left out, not set to undefined: a local result then has exactly
// the keys the server's JSON has.
import type { LayerResolution, Resolution } from "./resolve.js";
import type { JsonValue } from "./types.js";

/** runtime-api.md: "currently always 60000". */
export const SUGGESTED_REFRESH_MS = 60_000;

/** One entry of metadata.layers. */
export interface ResolvedLayer {
  layerId: string;
  bucket: number;
  policyId?: string;
  allocationId?: string;
  allocationName?: string;
  /** Present (true) when the layer was resolved only for attribution: expose nothing for it. */
  attributionOnly?: true;
}

export interface ResolveResponse {
  decisionId: string;
  assignments: Record<string, JsonValue>;
  metadata: {
    /** ISO 8601 time of the decision. */
    timestamp: string;
    unitKeyValue?: string;
    layers: ResolvedLayer[];
    configVersion: string;
    filteredContext?: Record<string, unknown>;
    /** Requested parameters the bundle does not have (they are absent from assignments). */
    unknownParameters?: string[];
    /** The context has no value for the project's unit key: its layers were skipped. */
    unitKeyMissing?: true;
  };
  stateVersion: string;
  suggestedRefreshMs: number;
}

export interface ResponseIds {
  readonly decisionId: string;
  /** ISO 8601. */
  readonly timestamp: string;
  /** The bundle version resolved against. */
  readonly version: string;
}

export function resolveResponse(resolution: Resolution, ids: ResponseIds): ResolveResponse {
  const { timestamp, version: configVersion } = ids;
  const { unitKeyValue, filteredContext } = resolution;
  const layers = resolution.layers.map(resolvedLayer);
  // Written out in the contract's order of fields.
  const metadata: ResolveResponse["metadata"] =
    unitKeyValue === undefined ? { timestamp, layers, configVersion } : { timestamp, unitKeyValue, layers, configVersion };
  if (filteredContext !== undefined) metadata.filteredContext = filteredContext;
  if (resolution.unknownParameters !== undefined) metadata.unknownParameters = resolution.unknownParameters;
  if (resolution.unitKeyMissing) metadata.unitKeyMissing = true;
  return {
    decisionId: ids.decisionId,
    assignments: resolution.assignments,
    metadata,
    stateVersion: ids.version,
    suggestedRefreshMs: SUGGESTED_REFRESH_MS,
  };
}

function resolvedLayer(layer: Resolution["layers"][number]): ResolvedLayer {
  const out: ResolvedLayer = { layerId: layer.layerId, bucket: layer.bucket };
  if (layer.policyId !== undefined) out.policyId = layer.policyId;
  if (layer.allocationId !== undefined) out.allocationId = layer.allocationId;
  if (layer.allocationName !== undefined) out.allocationName = layer.allocationName;
  if (layer.attributionOnly) out.attributionOnly = true;
  return out;
}

/**
 * The contract's LayerAssignment for a resolved layer, as decision and exposure events carry it:
 * `probability` only for adaptive arms (undefined vanishes in JSON).
 */
export function layerAssignment(layer: LayerResolution): Record<string, unknown> {
  return {
    layerId: layer.layerId,
    bucket: layer.bucket,
    policyId: layer.policyId,
    policyKey: layer.policyKey,
    allocationId: layer.allocationId,
    allocationName: layer.allocationName,
    allocationKey: layer.allocationKey,
    probability: layer.probability,
  };
}
