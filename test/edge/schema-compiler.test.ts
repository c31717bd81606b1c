// The Worker's property-schema check (@cfworker/json-schema, no code generation) reports what
// ajv reports on Node — the same JSON Pointers and ajv's words — for the keywords event
// definitions use, and leaves `format` unchecked as Node does.
import { describe, expect, it } from "vitest";
import { edgeSchemaCompiler, withoutFormats } from "../../src/edge/schema-compiler.js";
import { createAjvCompiler } from "../../src/server/events/schemas.js";

const SCHEMA = {
  type: "object",
  required: ["sku", "quantity"],
  additionalProperties: false,
  properties: {
    sku: { type: "string", minLength: 3, maxLength: 8, pattern: "^[A-Z]" },
    quantity: { type: "integer", minimum: 1, maximum: 99 },
    price: { type: "number", exclusiveMinimum: 0, multipleOf: 0.01 },
    currency: { enum: ["EUR", "USD"] },
    channel: { const: "web" },
    email: { type: "string", format: "email" },
    tags: { type: "array", minItems: 1, maxItems: 3, uniqueItems: true, items: { type: "string" } },
    format: { type: "string" },
    legacy: false,
    "a/b~c": { type: "object", required: ["city"], properties: { city: { type: "string" } } },
  },
};

const CASES: unknown[] = [
  { sku: "ABC", quantity: 2 },
  {},
  { sku: 7, quantity: 2.5 },
  { sku: "ab", quantity: 0 },
  { sku: "ABCDEFGHIJ", quantity: 100 },
  { sku: "ABC", quantity: 1, price: 0 },
  { sku: "ABC", quantity: 1, price: 1.005 },
  { sku: "ABC", quantity: 1, currency: "GBP", channel: "app" },
  { sku: "ABC", quantity: 1, email: "not an email", format: "free text" },
  { sku: "ABC", quantity: 1, tags: [] },
  { sku: "ABC", quantity: 1, tags: ["a", "a"] },
  { sku: "ABC", quantity: 1, tags: ["a", "b", "c", "d"] },
  { sku: "ABC", quantity: 1, tags: [1] },
  { sku: "ABC", quantity: 1, extra: true, more: 1 },
  { sku: "ABC", quantity: 1, legacy: 1 },
  { sku: "ABC", quantity: 1, "a/b~c": {} },
  { sku: "ABC", quantity: 1, "a/b~c": { city: 5 } },
  "not an object",
];

describe("the edge's property-schema check", () => {
  const onNode = createAjvCompiler()(SCHEMA, "purchase");
  const onEdge = edgeSchemaCompiler(SCHEMA, "purchase");

  it.each(CASES.map((properties, i) => [i, properties] as const))("case %i: the violations ajv reports, at the same paths, in the same words", (_i, properties) => {
    const byPath = (list: readonly { path: string; message: string }[]) => [...list].sort((a, b) => `${a.path} ${a.message}`.localeCompare(`${b.path} ${b.message}`));
    expect(byPath(onEdge(properties))).toEqual(byPath(onNode(properties)));
  });

  it("takes out `format` keywords only, not a property named format", () => {
    expect(withoutFormats(SCHEMA)).toMatchObject({ properties: { email: { type: "string" }, format: { type: "string" } } });
    expect((withoutFormats(SCHEMA) as { properties: { email: Record<string, unknown> } }).properties.email).not.toHaveProperty("format");
  });
});
