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
