// The bundle's JSON Schema (src/bundle/schema.ts) against what it describes: the interfaces of
// src/bundle/types.ts and policy-params.ts (field names and which are required, read with the
// TypeScript compiler), the shipped schema/bundle.schema.json, and the example bundles of
// docs/bundles.md (valid for ajv's draft 2020-12 and for validateBundle alike).
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020 } from "ajv/dist/2020.js";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { BUNDLE_SCHEMA } from "../../src/bundle/schema.js";
import { validateBundle } from "../../src/bundle/validate.js";

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

interface Shape {
  fields: string[];
  required: string[];
}

/** The properties of every interface (and of the members of union type aliases) declared in `file`. */
function declaredShapes(file: string): Map<string, Shape> {
  const source = ts.createSourceFile(file, readFileSync(root(file), "utf8"), ts.ScriptTarget.ES2022, true);
  const shapes = new Map<string, Shape>();
  const add = (name: string, members: ts.NodeArray<ts.TypeElement>) => {
    const shape = shapes.get(name) ?? { fields: [], required: [] };
    for (const m of members) {
      if (!ts.isPropertySignature(m)) continue;
      const field = m.name.getText(source).replace(/^"|"$/g, "");
      if (!shape.fields.includes(field)) shape.fields.push(field);
      if (m.questionToken === undefined && !shape.required.includes(field)) shape.required.push(field);
    }
    shapes.set(name, shape);
  };
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) add(node.name.text, node.members);
    if (ts.isTypeAliasDeclaration(node) && ts.isUnionTypeNode(node.type)) {
      for (const t of node.type.types) if (ts.isTypeLiteralNode(t)) add(node.name.text, t.members);
    }
  });
  return shapes;
}

interface SchemaObject {
  properties: Record<string, unknown>;
  required?: string[];
}

const defs = BUNDLE_SCHEMA.$defs as unknown as Record<string, SchemaObject>;
const sorted = (xs: readonly string[]) => [...xs].sort();

describe("the bundle JSON Schema", () => {
  const types = declaredShapes("src/bundle/types.ts");
  const params = declaredShapes("src/bundle/policy-params.ts");
  const pairs: [string, SchemaObject, Shape | undefined][] = [
    ["Bundle", BUNDLE_SCHEMA as unknown as SchemaObject, types.get("Bundle")],
    ...["Hashing", "Parameter", "Layer", "Policy", "Reward", "Allocation", "EventDefinition"].map(
      (name): [string, SchemaObject, Shape | undefined] => [name, defs[name]!, types.get(name)],
    ),
    ["Feature", defs.Feature!, params.get("FeatureSpec")],
  ];

  it.each(pairs)("has the fields of the %s interface, required where the interface requires them", (_name, schema, shape) => {
    expect(shape).toBeDefined();
    expect(sorted(Object.keys(schema.properties))).toEqual(sorted(shape!.fields));
    // A union's members differ in what they require (values only for categorical): the schema requires what all do.
    const required = _name === "Feature" ? ["name", "type"] : shape!.required;
    expect(sorted(schema.required ?? [])).toEqual(sorted(required));
  });

  it("has every adaptive policy param of PolicyParams, none required", () => {
    const shape = params.get("PolicyParams")!;
    expect(sorted(Object.keys(defs.PolicyParams!.properties))).toEqual(sorted(shape.fields));
    expect(defs.PolicyParams!.required).toBeUndefined();
  });

  it("is shipped as schema/bundle.schema.json, as built (npm run build writes it)", () => {
    const shipped: unknown = JSON.parse(readFileSync(root("schema/bundle.schema.json"), "utf8"));
    expect(shipped).toEqual(JSON.parse(JSON.stringify(BUNDLE_SCHEMA)));
    const pkg = JSON.parse(readFileSync(root("package.json"), "utf8")) as { files: string[]; exports: Record<string, string> };
    expect(pkg.files).toContain("schema");
    expect(pkg.exports["./bundle.schema.json"]).toBe("./schema/bundle.schema.json");
  });

  const examples = readdirSync(root("examples/bundles")).filter((f) => f.endsWith(".json"));
  const validate = new Ajv2020({ strict: true, allErrors: true }).compile(BUNDLE_SCHEMA);

  it("has the six worked examples of docs/bundles.md", () => {
    expect(sorted(examples)).toEqual(["ab-test.json", "bandit.json", "events.json", "flag.json", "multi-entity.json", "rollout.json"]);
    const doc = readFileSync(root("docs/bundles.md"), "utf8");
    for (const file of examples) expect(doc).toContain(`examples/bundles/${file}`);
  });

  it.each(examples)("accepts examples/bundles/%s, as validateBundle does", (file) => {
    const bundle: unknown = JSON.parse(readFileSync(root(`examples/bundles/${file}`), "utf8"));
    expect(validate(bundle), JSON.stringify(validate.errors)).toBe(true);
    expect(validateBundle(bundle)).toEqual([]);
  });

  it("refuses an unknown field and a missing required one, as validateBundle does", () => {
    const bundle = JSON.parse(readFileSync(root("examples/bundles/flag.json"), "utf8")) as Record<string, unknown>;
    const withTypo = { ...bundle, eventDefinition: [] };
    expect(validate(withTypo)).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ keyword: "additionalProperties", params: { additionalProperty: "eventDefinition" } });
    const { hashing: _, ...withoutHashing } = bundle;
    expect(validate(withoutHashing)).toBe(false);
    expect(validateBundle(withoutHashing).map((p) => p.path)).toEqual(["hashing"]);
  });
});
