// Event property schemas in a Worker: Workers forbid `new Function`, which ajv compiles with, so
// the Worker checks them with @cfworker/json-schema (an interpreter, draft 2020-12) and words each
// violation as ajv does (server/events/schemas.ts), at the same JSON Pointer. As on Node, `format`
// is an annotation only: it is taken out of the schema before it is handed to the validator.
import { type OutputUnit, type Schema, Validator } from "@cfworker/json-schema";
import { MAX_VIOLATIONS, type SchemaCompiler, type Violation } from "../server/events/schemas.js";

/** Keywords whose value maps names to schemas, and those that hold one schema or a list of them. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
const SCHEMA_HOLDERS = new Set(["items", "prefixItems", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else", "allOf", "anyOf", "oneOf", "additionalItems"]);

/** The schema without `format` keywords (a property named "format" stays). */
export function withoutFormats(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutFormats);
  if (typeof schema !== "object" || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === "format") continue;
    if (SCHEMA_MAPS.has(keyword) && typeof value === "object" && value !== null) {
      copy[keyword] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutFormats(sub)]));
    } else copy[keyword] = SCHEMA_HOLDERS.has(keyword) ? withoutFormats(value) : value;
  }
  return copy;
}

/** Errors that only say a subschema failed: its own errors are reported. */
const AGGREGATES = new Set(["properties", "patternProperties", "items", "prefixItems", "allOf", "$ref", "dependentSchemas", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems", "contains", "propertyNames"]);

const pointerOf = (location: string): string => decodeURIComponent(location.replace(/^#/, ""));

function valueAt(schema: unknown, keywordLocation: string): unknown {
  let at = schema;
  for (const part of pointerOf(keywordLocation).split("/").slice(1)) {
    at = (at as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return at;
}

const quoted = (error: string): string => /"([^"]*)"/.exec(error)?.[1] ?? "";

const MESSAGES: Record<string, (value: unknown, unit: OutputUnit) => string> = {
  required: (_value, unit) => `must have required property '${quoted(unit.error)}'`,
  type: (value) => `must be ${Array.isArray(value) ? value.join(",") : String(value)}`,
  minimum: (value) => `must be >= ${value}`,
  maximum: (value) => `must be <= ${value}`,
  exclusiveMinimum: (value) => `must be > ${value}`,
  exclusiveMaximum: (value) => `must be < ${value}`,
  multipleOf: (value) => `must be multiple of ${value}`,
  minLength: (value) => `must NOT have fewer than ${value} characters`,
  maxLength: (value) => `must NOT have more than ${value} characters`,
  minItems: (value) => `must NOT have fewer than ${value} items`,
  maxItems: (value) => `must NOT have more than ${value} items`,
  minProperties: (value) => `must NOT have fewer than ${value} properties`,
  maxProperties: (value) => `must NOT have more than ${value} properties`,
  pattern: (value) => `must match pattern "${value}"`,
  enum: () => "must be equal to one of the allowed values",
  const: () => "must be equal to constant",
  uniqueItems: (_value, unit) => {
    const [first, second] = /indexes (\d+) and (\d+)/.exec(unit.error)?.slice(1) ?? [];
    return `must NOT have duplicate items (items ## ${second} and ${first} are identical)`;
  },
  false: () => "boolean schema is false",
  additionalProperties: (_value, unit) => `must NOT have additional property '${quoted(unit.error)}'`,
};

function violation(schema: unknown, unit: OutputUnit): Violation {
  const word = MESSAGES[unit.keyword];
  return { path: pointerOf(unit.instanceLocation), message: word === undefined ? unit.error : word(valueAt(schema, unit.keywordLocation), unit) };
}

/** The `false` schemas' errors of the properties additionalProperties refused: its own error names them already. */
function refusedProperties(units: readonly OutputUnit[]): Set<string> {
  return new Set(units.filter((unit) => unit.keyword === "additionalProperties").map((unit) => `${unit.instanceLocation}/${quoted(unit.error)}`));
}

export const edgeSchemaCompiler: SchemaCompiler = (propertySchema) => {
  const schema = withoutFormats(propertySchema) as Schema;
  const validator = new Validator(schema, "2020-12", false);
  return function validateProperties(properties): readonly Violation[] {
    const result = validator.validate(properties);
    if (result.valid) return [];
    const refused = refusedProperties(result.errors);
    return result.errors
      .filter((unit) => !AGGREGATES.has(unit.keyword) && !(unit.keyword === "false" && refused.has(unit.instanceLocation)))
      .slice(0, MAX_VIOLATIONS)
      .map((unit) => violation(schema, unit));
  };
};
