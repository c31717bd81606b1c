// decide(policy, context): an adaptive policy's arm from the service's freshest learned state,
// POST /v1/decide/:policyId. It needs a server-side key, which must never ship to a browser: a
// client made with a publishable key refuses it before any request.
import type { JsonValue } from "../bundle/types.js";
import { type Service, authorization, endpoint, failure } from "./http.js";

/** The POST /v1/decide/:policyId 200 body (docs/api.md, decisions.md §7). */
export interface DecideResult {
  decisionId: string;
  policyId: string;
  policyKey: string;
  layerId: string;
  allocationId: string;
  allocationKey: string;
  allocationName: string;
  assignments: Record<string, JsonValue>;
  /** The chosen arm's propensity. */
  probability: number;
  stateVersion: string;
  metadata: { timestamp: string; unitKeyValue: string; entityId?: string; bucket: number; algorithm?: string; filteredContext?: Record<string, unknown> };
}

export async function decideOnServer(service: Service, request: { policyId: string; env: string; projectId: string; context: Record<string, unknown> }): Promise<DecideResult> {
  if (service.apiKey.startsWith("vane_pk_")) throw new TypeError("decide needs a server-side key (sk)");
  const response = await service.fetch(endpoint(service, `/v1/decide/${encodeURIComponent(request.policyId)}`), {
    method: "POST",
    headers: { ...authorization(service), "Content-Type": "application/json", "X-Env": request.env, "X-Project-Id": request.projectId },
    body: JSON.stringify({ context: request.context }),
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as DecideResult;
}
