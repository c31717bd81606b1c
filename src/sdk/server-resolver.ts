// Server mode: POST /v1/resolve for a context (runtime-api.md). The project comes from the key;
// X-Project-Id names it too, which org-scoped keys need and project keys accept when it matches.
import type { ResolveResponse } from "../bundle/response.js";
import { type Service, authorization, endpoint, failure } from "./http.js";

export interface ServerResolveRequest {
  readonly projectId: string;
  readonly env: string;
  readonly context: Record<string, unknown>;
  readonly parameters: readonly string[] | undefined;
}

/** The service's answer; rejects with a VaneError for a refusal, or fetch's error when unreachable. */
export async function resolveOnServer(service: Service, request: ServerResolveRequest): Promise<ResolveResponse> {
  const response = await service.fetch(endpoint(service, "/v1/resolve"), {
    method: "POST",
    headers: { ...authorization(service), "Content-Type": "application/json", "X-Env": request.env, "X-Project-Id": request.projectId },
    body: JSON.stringify({ context: request.context, parameters: request.parameters }),
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as ResolveResponse;
}
