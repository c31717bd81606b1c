// What the OpenFeature tests share: the running server with the drawn bundle and its keys, the
// /v1/resolve answer they compare with, and which typed OpenFeature getter fits a parameter.
import type { Bundle, ParameterType } from "../../src/bundle/types.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { GENERATED_ORG, GENERATED_PROJECT, asVaneContext, generatedBundle, seedOfRun } from "./generated-bundle.js";

export interface OpenFeatureServer {
  readonly server: TestServer;
  readonly bundle: Bundle;
  readonly seed: number;
  readonly sk: string;
  readonly pk: string;
}

export async function startOpenFeatureServer(): Promise<OpenFeatureServer> {
  const seed = seedOfRun();
  const bundle = generatedBundle(seed);
  const server = await startTestServer();
  await server.putBundle(bundle);
  const sk = await server.key({ orgId: GENERATED_ORG, projectId: GENERATED_PROJECT, scopes: ["sdk:read", "sdk:write"] });
  const pk = await server.key({ kind: "pk", orgId: GENERATED_ORG, projectId: GENERATED_PROJECT, scopes: ["sdk:read", "sdk:write"] });
  return { server, bundle, seed, sk, pk };
}

/** POST /v1/resolve's assignments for the Vane context an OpenFeature context stands for. */
export async function resolvedAssignments(of: OpenFeatureServer, context: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await call(of.server, "/v1/resolve", { key: of.sk, body: { context: asVaneContext(context) } });
  if (response.status !== 200) throw new Error(`/v1/resolve answered ${response.status}`);
  return ((await response.json()) as { assignments: Record<string, unknown> }).assignments;
}

export type Getter = "boolean" | "string" | "number" | "object";

export function getterFor(type: ParameterType): Getter {
  if (type === "integer" || type === "number") return "number";
  if (type === "json") return "object";
  return type;
}

/** A default of the getter's type, and a getter that does not fit `type` (for TYPE_MISMATCH). */
export const DEFAULTS: Record<Getter, boolean | string | number | object> = { boolean: false, string: "", number: 0, object: {} };

export function otherGetter(type: ParameterType): Getter {
  return getterFor(type) === "boolean" ? "string" : "boolean";
}

/** A POST /v1/resolve 200 body, as far as the OpenFeature details need it. */
export interface ResolveAnswer {
  assignments: Record<string, unknown>;
  metadata: { layers: { layerId: string; bucket: number; policyId?: string; allocationId?: string }[]; configVersion: string };
}

export async function resolvedAnswer(of: OpenFeatureServer, context: Record<string, unknown>): Promise<ResolveAnswer> {
  const response = await call(of.server, "/v1/resolve", { key: of.sk, body: { context: asVaneContext(context) } });
  if (response.status !== 200) throw new Error(`/v1/resolve answered ${response.status}`);
  return (await response.json()) as ResolveAnswer;
}

export interface ExpectedDetails {
  value: unknown;
  variant?: string;
  reason: string;
  metadata: Record<string, unknown>;
}

/** What a flag's value, variant, reason and metadata must be (docs/openfeature.md), read from a /v1/resolve answer and the bundle. */
export function expectedDetails(source: Bundle, flag: string, answer: ResolveAnswer): ExpectedDetails {
  const parameter = source.parameters.find((p) => p.key === flag)!;
  const value = answer.assignments[flag];
  const layer = answer.metadata.layers.find((l) => l.layerId === parameter.layerId);
  const metadata: Record<string, unknown> = { layerId: parameter.layerId, configVersion: source.version };
  if (layer === undefined) return { value, reason: "DEFAULT", metadata };
  metadata.bucket = layer.bucket;
  const policy = source.layers.flatMap((l) => l.policies).find((p) => p.id === layer.policyId);
  if (policy === undefined) return { value, reason: "DEFAULT", metadata };
  const allocation = policy.allocations.find((a) => a.id === layer.allocationId)!;
  const reason = policy.kind === "static" && policy.conditions.length > 0 ? "TARGETING_MATCH" : "SPLIT";
  return { value, variant: allocation.key, reason, metadata: { ...metadata, policyKey: policy.key, allocationKey: allocation.key } };
}

/** The same details as the OFREP endpoints send them: OFREP's reason enum has STATIC where OpenFeature has DEFAULT. */
export function onTheWire(details: ExpectedDetails): ExpectedDetails {
  return details.reason === "DEFAULT" ? { ...details, reason: "STATIC" } : details;
}
