// The bundle as a JSON Schema (draft 2020-12), for editors and for other tools that write bundles.
// It is also where validation learns which fields each object of a bundle may have
// (unknown-fields.ts walks it), and test/bundle/schema.test.ts holds its field names and
// required lists to the interfaces of types.ts and policy-params.ts, so the three cannot drift.
// `npm run build` writes it to schema/bundle.schema.json (shipped in the package).
//
// What the schema cannot say — unique ids, overlapping bucket ranges, overrides naming existing
// parameters of the same layer, values fitting their parameter's type, weights summing to 1 — is
// checked by validate.ts; `vane bundles validate FILE` runs both.
import { DEFAULT_PARAMS } from "./policy-params.js";
import { HASHING_ALGORITHMS, PARAMETER_TYPES, POLICY_KINDS, POLICY_STATES } from "./types.js";

export const BUNDLE_SCHEMA_ID = "https://vane.dev/schema/bundle.schema.json";

const nonEmpty = { type: "string", minLength: 1 } as const;
/** Date and time with a zone, as validate-values.ts isoTimestampMs reads it. */
const timestamp = {
  type: "string",
  pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:\\d{2})$",
  description: "ISO 8601 date and time with a zone, e.g. 2026-11-25T12:00:00Z",
} as const;
const ref = (name: string) => ({ $ref: `#/$defs/${name}` }) as const;
const arrayOf = (name: string) => ({ type: "array", items: ref(name) }) as const;

/** Every number of an adaptive policy's params (policy-params.ts NUMBER_RULES checks their ranges). */
const numericParams = Object.fromEntries(
  Object.entries(DEFAULT_PARAMS)
    .filter(([, value]) => typeof value === "number")
    .map(([key, value]) => [key, { type: "number", default: value }]),
);

export const BUNDLE_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: BUNDLE_SCHEMA_ID,
  title: "Vane config bundle",
  description: "One project's and env's parameters, layers, policies and event definitions (docs/bundles.md).",
  type: "object",
  required: ["version", "orgId", "projectId", "env", "hashing", "parameters", "layers"],
  additionalProperties: false,
  properties: {
    $schema: { type: "string", description: "For editors; ignored by Vane." },
    version: { ...timestamp, description: "An ISO 8601 timestamp; a new bundle must have a later one (`vane bundles put`)." },
    orgId: nonEmpty,
    projectId: nonEmpty,
    env: nonEmpty,
    hashing: ref("Hashing"),
    parameters: arrayOf("Parameter"),
    layers: arrayOf("Layer"),
    eventDefinitions: arrayOf("EventDefinition"),
    savedGroups: {
      type: "object",
      description: "Named lists of values for the $inGroup / $notInGroup condition operators.",
      additionalProperties: { type: "array" },
    },
  },
  $defs: {
    Hashing: {
      type: "object",
      required: ["unitKey"],
      additionalProperties: false,
      properties: {
        unitKey: { ...nonEmpty, description: "The context field units are hashed on, e.g. userId." },
        bucketCount: { type: "integer", minimum: 1, maximum: 4294967295, default: 1000 },
        algorithm: { enum: [...HASHING_ALGORITHMS], default: "sha256-v2" },
      },
    },
    Parameter: {
      type: "object",
      required: ["key", "type", "default", "layerId", "namespace"],
      additionalProperties: false,
      properties: {
        key: { ...nonEmpty, description: "Dotted name, e.g. checkout.color." },
        type: { enum: [...PARAMETER_TYPES] },
        default: { description: "Served when no policy overrides it; must fit `type`." },
        layerId: { ...nonEmpty, description: "The layer whose policies may override it." },
        namespace: { type: "string" },
      },
    },
    Layer: {
      type: "object",
      required: ["id", "policies"],
      additionalProperties: false,
      properties: {
        id: nonEmpty,
        salt: { type: "string", description: "Hash salt; the layer id when absent." },
        unitKey: { ...nonEmpty, description: "The context field this layer hashes; hashing.unitKey when absent." },
        policies: { ...arrayOf("Policy"), description: "The first running policy that applies decides the layer." },
      },
    },
    Policy: {
      type: "object",
      required: ["id", "key", "state", "kind", "allocations", "conditions"],
      additionalProperties: false,
      properties: {
        id: nonEmpty,
        key: nonEmpty,
        state: { enum: [...POLICY_STATES], description: "Only running policies are served." },
        kind: { enum: [...POLICY_KINDS] },
        allocations: { ...arrayOf("Allocation"), minItems: 1 },
        conditions: {
          type: "array",
          items: { type: "object", description: "A MongoDB-style condition on the context (GrowthBook's operators)." },
          description: "All must match; [] means everyone.",
        },
        startAt: timestamp,
        endAt: timestamp,
        reward: ref("Reward"),
        params: ref("PolicyParams"),
        weights: { type: "array", items: { type: "number", minimum: 0 }, description: "Adaptive arm weights aligned with allocations, summing to 1." },
        entityKey: { ...nonEmpty, description: "Context field that makes an adaptive policy learn per entity." },
        logContextFields: { type: "array", items: nonEmpty, description: "Context fields copied into filteredContext." },
      },
    },
    Reward: {
      type: "object",
      required: ["event", "type", "windowSeconds"],
      additionalProperties: false,
      properties: {
        event: { ...nonEmpty, description: "The track event that rewards a decision." },
        type: { enum: ["binary", "value"] },
        windowSeconds: { type: "number", exclusiveMinimum: 0 },
      },
    },
    PolicyParams: {
      type: "object",
      additionalProperties: false,
      description: "An adaptive policy's settings over their defaults (docs/adaptive.md).",
      properties: {
        ...numericParams,
        algorithm: { enum: ["thompson", "linucb"], default: DEFAULT_PARAMS.algorithm },
        features: { ...arrayOf("Feature"), description: "Contextual policies: the context fields they learn from." },
      },
    },
    Feature: {
      type: "object",
      required: ["name", "type"],
      additionalProperties: false,
      properties: {
        name: nonEmpty,
        type: { enum: ["numeric", "categorical"] },
        values: { type: "array", items: { type: "string" }, minItems: 1, description: "Categorical features: the one-hot values." },
      },
    },
    Allocation: {
      type: "object",
      required: ["id", "name", "key", "bucketRange", "overrides"],
      additionalProperties: false,
      properties: {
        id: nonEmpty,
        name: nonEmpty,
        key: nonEmpty,
        bucketRange: {
          type: "array",
          prefixItems: [{ type: "integer", minimum: 0 }, { type: "integer", minimum: 0 }],
          minItems: 2,
          maxItems: 2,
          description: "Inclusive [first, last] within 0..bucketCount-1.",
        },
        overrides: { type: "object", description: "Parameter key → value, for parameters of this layer." },
      },
    },
    EventDefinition: {
      type: "object",
      required: ["name"],
      additionalProperties: false,
      properties: {
        name: nonEmpty,
        valueType: { type: "string" },
        unit: { type: "string" },
        propertySchema: { type: "object", description: "A JSON Schema (2020-12) for the track event's properties." },
        schemaEnforcement: { enum: ["warn", "reject"], description: "reject: events whose properties fail the schema are refused." },
      },
    },
  },
} as const;
