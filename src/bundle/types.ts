// The config bundle as served by GET /v1/config/:projectId (runtime-api.md "Resources"), with the
// fields decisions.md adds: layer salt and unitKey, policy schedule, adaptive policy fields and
// weights, saved groups, event definition schemas.

export type ParameterType = "string" | "boolean" | "number" | "integer" | "json";
export type PolicyState = "draft" | "running" | "paused" | "completed";
export type PolicyKind = "static" | "thompson" | "ucb1" | "epsilon_greedy" | "contextual";
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const PARAMETER_TYPES: readonly ParameterType[] = ["string", "boolean", "number", "integer", "json"];
export const POLICY_STATES: readonly PolicyState[] = ["draft", "running", "paused", "completed"];
export const POLICY_KINDS: readonly PolicyKind[] = ["static", "thompson", "ucb1", "epsilon_greedy", "contextual"];
export const HASHING_ALGORITHMS = ["sha256-v2"] as const;
export const DEFAULT_BUCKET_COUNT = 1000;

export interface Bundle {
  /** For editors (the JSON Schema's URL or path); ignored. */
  $schema?: string;
  /** An ISO 8601 timestamp; each new version of a project's bundle has a later one. */
  version: string;
  orgId: string;
  projectId: string;
  env: string;
  hashing: Hashing;
  parameters: Parameter[];
  layers: Layer[];
  eventDefinitions?: EventDefinition[];
  /** Named lists of values for the $inGroup / $notInGroup condition operators. */
  savedGroups?: Record<string, JsonValue[]>;
}

export interface Hashing {
  unitKey: string;
  /** Buckets per layer; default 1000. */
  bucketCount?: number;
  /** Absent means sha256-v2. */
  algorithm?: string;
}

export interface Parameter {
  key: string;
  type: ParameterType;
  default: JsonValue;
  layerId: string;
  namespace: string;
}

export interface Layer {
  id: string;
  /** Hash salt; the layer id when absent. */
  salt?: string;
  /** Context field this layer randomizes on; hashing.unitKey when absent (multi-entity projects). */
  unitKey?: string;
  policies: Policy[];
}

/** A MongoDB-style condition object (decisions.md §4). */
export type Condition = Record<string, unknown>;

export interface Policy {
  id: string;
  key: string;
  state: PolicyState;
  kind: PolicyKind;
  allocations: Allocation[];
  /** All entries must match; empty means everyone. */
  conditions: Condition[];
  /** ISO 8601 schedule window, either end optional. */
  startAt?: string;
  endAt?: string;
  // Adaptive policies (kind other than static):
  reward?: Reward;
  params?: Record<string, unknown>;
  /** Arm weights aligned with allocations, summing to 1; an equal split when absent. */
  weights?: number[];
  /** Context field that makes the policy per-entity. */
  entityKey?: string;
  /** Context fields copied into filteredContext when this policy matches. */
  logContextFields?: string[];
}

export interface Reward {
  event: string;
  type: "binary" | "value";
  windowSeconds: number;
}

export interface Allocation {
  id: string;
  name: string;
  key: string;
  /** Inclusive [first, last] within 0..bucketCount-1. */
  bucketRange: [number, number];
  overrides: Record<string, JsonValue>;
}

export interface EventDefinition {
  name: string;
  valueType?: string;
  unit?: string;
  /** JSON Schema (draft 2020-12) for a track event's properties. */
  propertySchema?: Record<string, unknown>;
  schemaEnforcement?: "warn" | "reject";
}

/** The request context: unit keys and any fields conditions read. */
export type Context = Record<string, unknown>;
