import { describe, expect, it } from "vitest";
import type { EventDefinition } from "../../../src/bundle/types.js";
import {
  EventSchemaError, MAX_VIOLATIONS, compileEventCatalog, createAjvCompiler, formatViolations, schemaProblems,
  toViolations, type SchemaCompiler, type Violation,
} from "../../../src/server/events/schemas.js";

const PURCHASE_SCHEMA = {
  type: "object",
  required: ["sku"],
  properties: {
    sku: { type: "string", minLength: 1 },
    quantity: { type: "integer", minimum: 1 },
    email: { type: "string", format: "email" },
    shipping: {
      type: "object",
      properties: { address: { type: "object", properties: { zip: { type: "string", pattern: "^[0-9]{5}$" } } } },
    },
    items: { type: "array", items: { type: "object", required: ["id"], properties: { price: { type: "number", minimum: 0 } } } },
    "a/b~c": { type: "boolean" },
  },
  "x-owner": "growth-team",
};

const DEFINITIONS: EventDefinition[] = [
  { name: "purchase", valueType: "currency", unit: "EUR", propertySchema: PURCHASE_SCHEMA, schemaEnforcement: "reject" },
  { name: "signup", propertySchema: { type: "object", required: ["plan"], additionalProperties: false, properties: { plan: { enum: ["free", "pro"] } } } },
  { name: "page_view" },
  { name: "search", schemaEnforcement: "reject" },
];

const catalog = compileEventCatalog(DEFINITIONS);

function violationsOf(name: string, properties: unknown): readonly Violation[] {
  const result = catalog.check(name, properties);
  if (!result.defined) throw new Error(`${name} not defined`);
  return result.violations;
}

describe("compileEventCatalog: check", () => {
  it("says an unknown event name is not defined (it is auto-discovered, never an error)", () => {
    expect(catalog.check("purchse", { sku: 1 })).toEqual({ defined: false });
    expect(catalog.check("Purchase", {})).toEqual({ defined: false });
    expect(catalog.check("constructor", {})).toEqual({ defined: false });
    expect(compileEventCatalog(undefined).check("purchase", {})).toEqual({ defined: false });
    expect(compileEventCatalog([]).check("purchase", {})).toEqual({ defined: false });
  });

  it("gives the definition's enforcement, warn by default, and no violations for valid properties", () => {
    expect(catalog.check("purchase", { sku: "A-1", quantity: 2 })).toEqual({ defined: true, enforcement: "reject", violations: [] });
    expect(catalog.check("signup", { plan: "pro" })).toEqual({ defined: true, enforcement: "warn", violations: [] });
  });

  it("has no violations for a definition without a schema, whatever the properties", () => {
    expect(catalog.check("page_view", { anything: [1, 2] })).toEqual({ defined: true, enforcement: "warn", violations: [] });
    expect(catalog.check("search", "not even an object")).toEqual({ defined: true, enforcement: "reject", violations: [] });
  });

  it("reports every violation with its JSON pointer, root as the empty string", () => {
    expect(violationsOf("purchase", { quantity: 0 })).toEqual([
      { path: "", message: "must have required property 'sku'" },
      { path: "/quantity", message: "must be >= 1" },
    ]);
  });

  it("reports violations at nested paths, array indices and escaped keys", () => {
    const properties = {
      sku: "A-1",
      shipping: { address: { zip: "1234" } },
      items: [{ id: 1, price: 3 }, { price: -1 }],
      "a/b~c": "yes",
    };
    expect(violationsOf("purchase", properties)).toEqual([
      { path: "/shipping/address/zip", message: 'must match pattern "^[0-9]{5}$"' },
      { path: "/items/1", message: "must have required property 'id'" },
      { path: "/items/1/price", message: "must be >= 0" },
      { path: "/a~1b~0c", message: "must be boolean" },
    ]);
  });

  it("checks a missing properties object as {}, so required fields are reported", () => {
    expect(catalog.check("purchase", undefined)).toEqual({
      defined: true,
      enforcement: "reject",
      violations: [{ path: "", message: "must have required property 'sku'" }],
    });
    expect(violationsOf("page_view", undefined)).toEqual([]);
  });

  it("checks null and non-object properties as they are, not as {}", () => {
    expect(violationsOf("purchase", null)).toEqual([{ path: "", message: "must be object" }]);
    expect(violationsOf("purchase", [])).toEqual([{ path: "", message: "must be object" }]);
  });

  it("names the extra property of additionalProperties: false", () => {
    expect(violationsOf("signup", { plan: "team", coupon: "X" })).toEqual([
      { path: "", message: "must NOT have additional property 'coupon'" },
      { path: "/plan", message: "must be equal to one of the allowed values" },
    ]);
  });

  it("does not validate formats (annotations in draft 2020-12)", () => {
    expect(violationsOf("purchase", { sku: "A-1", email: "not an email" })).toEqual([]);
    expect(violationsOf("purchase", { sku: "A-1", email: 42 })).toEqual([{ path: "/email", message: "must be string" }]);
  });

  it("reports at most MAX_VIOLATIONS per event", () => {
    const strict = compileEventCatalog([{ name: "e", propertySchema: { additionalProperties: false } }]);
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]));
    const result = strict.check("e", many);
    expect(result.defined && result.violations.length).toBe(MAX_VIOLATIONS);
  });

  it("gives the same answers on repeated checks (no state carried between events)", () => {
    const bad = { quantity: 0 };
    const first = violationsOf("purchase", bad);
    expect(violationsOf("purchase", { sku: "ok" })).toEqual([]);
    expect(violationsOf("purchase", bad)).toEqual(first);
  });

  it("turns a validator that throws into a violation instead of failing the batch", () => {
    const throwing: SchemaCompiler = () => () => {
      throw new RangeError("Maximum call stack size exceeded");
    };
    const c = compileEventCatalog([{ name: "e", propertySchema: {}, schemaEnforcement: "reject" }], throwing);
    expect(c.check("e", {})).toEqual({
      defined: true, enforcement: "reject", violations: [{ path: "", message: "could not be checked against the schema" }],
    });
  });
});

describe("schema features", () => {
  it("supports draft 2020-12 keywords ($defs, prefixItems, unevaluatedProperties, dependentRequired)", () => {
    const c = compileEventCatalog([{
      name: "e",
      propertySchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        $defs: { money: { type: "number", minimum: 0 } },
        properties: { price: { $ref: "#/$defs/money" }, pair: { prefixItems: [{ type: "string" }, { type: "number" }] } },
        dependentRequired: { price: ["currency"] },
        unevaluatedProperties: false,
      },
    }]);
    const result = c.check("e", { price: -1, pair: ["a", "b"], extra: true });
    expect(result.defined && result.violations).toEqual([
      { path: "/price", message: "must be >= 0" },
      { path: "/pair/1", message: "must be number" },
      { path: "", message: "must have property currency when property price is present" },
      { path: "", message: "must NOT have additional property 'extra'" },
    ]);
  });

  it("compiles each schema alone: two definitions may share an $id", () => {
    const schema = { $id: "https://example.com/product", type: "object", required: ["sku"] };
    const c = compileEventCatalog([
      { name: "add_to_cart", propertySchema: schema },
      { name: "purchase", propertySchema: { ...schema } },
    ]);
    expect(c.check("purchase", {})).toMatchObject({ violations: [{ path: "", message: "must have required property 'sku'" }] });
  });

  it("keeps the first of two definitions with the same name", () => {
    const c = compileEventCatalog([
      { name: "e", schemaEnforcement: "reject", propertySchema: { required: ["a"] } },
      { name: "e", propertySchema: { required: ["b"] } },
    ]);
    expect(c.check("e", {})).toEqual({ defined: true, enforcement: "reject", violations: [{ path: "", message: "must have required property 'a'" }] });
  });

  it("uses an injected compiler (the Workers path), passing the schema and event name", () => {
    const seen: string[] = [];
    const compiler: SchemaCompiler = (schema, name) => {
      seen.push(`${name}:${JSON.stringify(schema)}`);
      return (p) => (p === "bad" ? [{ path: "/x", message: "no" }] : []);
    };
    const c = compileEventCatalog([{ name: "e", propertySchema: { type: "object" } }, { name: "plain" }], compiler);
    expect(seen).toEqual(['e:{"type":"object"}']);
    expect(c.check("e", "bad")).toEqual({ defined: true, enforcement: "warn", violations: [{ path: "/x", message: "no" }] });
    expect(c.check("e", {})).toEqual({ defined: true, enforcement: "warn", violations: [] });
  });
});

describe("invalid schemas refuse the bundle", () => {
  const broken: EventDefinition[] = [
    { name: "ok", propertySchema: { type: "object" } },
    { name: "checkout", propertySchema: { type: "objekt" } },
    { name: "refund", propertySchema: { properties: { amount: { minimum: "zero" } } } },
    { name: "remote", propertySchema: { $ref: "https://example.com/schemas/remote.json" } },
    { name: "regex", propertySchema: { properties: { s: { pattern: "(" } } } },
  ];

  it("schemaProblems names each broken definition by its place in the bundle", () => {
    const problems = schemaProblems(broken);
    expect(problems.map((p) => p.path)).toEqual([
      "eventDefinitions[1].propertySchema",
      "eventDefinitions[2].propertySchema",
      "eventDefinitions[3].propertySchema",
      "eventDefinitions[4].propertySchema",
    ]);
    expect(problems[0]!.message).toMatch(/^event "checkout": not a valid JSON Schema: propertySchema\/type must be equal to one of the allowed values/);
    expect(problems[1]!.message).toBe('event "refund": not a valid JSON Schema: propertySchema/properties/amount/minimum must be number');
    expect(problems[2]!.message).toMatch(/^event "remote": not a valid JSON Schema: can't resolve reference https:\/\/example.com\/schemas\/remote.json/);
    expect(problems[3]!.message).toMatch(/^event "regex": not a valid JSON Schema: .*Invalid regular expression/);
  });

  it("schemaProblems is empty for valid definitions or none", () => {
    expect(schemaProblems(DEFINITIONS)).toEqual([]);
    expect(schemaProblems(undefined)).toEqual([]);
  });

  it("refuses a schema written for another draft rather than guessing", () => {
    const problems = schemaProblems([{ name: "old", propertySchema: { $schema: "http://json-schema.org/draft-07/schema#", type: "object" } }]);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(/^event "old": not a valid JSON Schema: /);
  });

  it("compileEventCatalog throws EventSchemaError listing them", () => {
    let caught: unknown;
    try {
      compileEventCatalog(broken);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EventSchemaError);
    const error = caught as EventSchemaError;
    expect(error.problems).toEqual(schemaProblems(broken));
    expect(error.message).toMatch(/^invalid event property schema: eventDefinitions\[1\]\.propertySchema: event "checkout": /);
    expect(error.message).toContain('event "regex"');
  });

  it("allows unknown keywords in user schemas", () => {
    expect(schemaProblems([{ name: "e", propertySchema: { type: "object", "x-pii": true, deprecated: true, examples: [{}] } }])).toEqual([]);
  });
});

describe("formatViolations and toViolations", () => {
  it("gives the reject-mode error text, root shown as (root)", () => {
    expect(formatViolations([
      { path: "/quantity", message: "must be >= 1" },
      { path: "", message: "must have required property 'sku'" },
    ])).toBe("Schema validation failed: /quantity must be >= 1; (root) must have required property 'sku'");
  });

  it("formats a real check's violations", () => {
    expect(formatViolations(violationsOf("purchase", { quantity: 0 }))).toBe(
      "Schema validation failed: (root) must have required property 'sku'; /quantity must be >= 1",
    );
  });

  it("maps ajv errors, as standalone validators leave them, to violations", () => {
    expect(toViolations(null)).toEqual([]);
    expect(toViolations([
      { instancePath: "/a", schemaPath: "#/properties/a/type", keyword: "type", params: { type: "string" }, message: "must be string" },
      { instancePath: "", schemaPath: "#/x", keyword: "x" , params: {} },
    ])).toEqual([
      { path: "/a", message: "must be string" },
      { path: "", message: 'must pass "x"' },
    ]);
  });

  it("keeps a compiled validator working after another schema with its $id is compiled", () => {
    const compile = createAjvCompiler();
    const first = compile({ $id: "urn:vane:product", required: ["x"] }, "a");
    const second = compile({ $id: "urn:vane:product", required: ["y"] }, "b");
    expect(first({ y: 1 })).toEqual([{ path: "", message: "must have required property 'x'" }]);
    expect(second({ y: 1 })).toEqual([]);
  });
});
