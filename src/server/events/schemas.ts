// Property schemas of event definitions (decisions.md §5): a catalog compiled once per bundle
// version, then one Map lookup and one validator call per track event.
//
// Decisions:
// - A track event without `properties` is checked as `{}` (as Segment Protocols and GrowthBook
//   do), so a schema's `required` still catches the missing object.
// - `format` is not validated: draft 2020-12 makes it an annotation by default (the
//   format-annotation vocabulary), ajv-formats is not a dependency, and precompiled validators
//   for Workers then need no format code. A schema that must constrain a string uses `pattern`.
// - Unknown keywords (`x-owner`, `deprecated`, ...) are allowed: ajv's strict mode is off.
// - A schema that does not compile is a broken bundle, not a per-event problem:
//   compileEventCatalog throws EventSchemaError naming the events, and schemaProblems gives the
//   same findings as bundle problems so that publishing (CLI import) refuses the bundle.
// - Each schema compiles in isolation (its own `$id` namespace): two definitions may share a
//   schema with the same `$id`, and none can `$ref` another's.
// - At most MAX_VIOLATIONS per event: `additionalProperties: false` against a large object could
//   otherwise put thousands of entries into one response.

import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import type { EventDefinition } from "../../bundle/types.js";
import type { BundleProblem } from "../../bundle/validate.js";

export interface Violation {
  /** JSON Pointer of the offending value within `properties`; "" for `properties` itself. */
  readonly path: string;
  readonly message: string;
}

export type SchemaEnforcement = "warn" | "reject";

export type SchemaCheck =
  | { readonly defined: false }
  | { readonly defined: true; readonly enforcement: SchemaEnforcement; readonly violations: readonly Violation[] };

export interface EventCatalog {
  /** How a track event named `name` with these `properties` (undefined when absent) fares. */
  check(name: string, properties: unknown): SchemaCheck;
}

/** Checks one `properties` value; [] when valid. */
export type PropertyValidator = (properties: unknown) => readonly Violation[];

/**
 * Turns one event definition's propertySchema into a validator; throws when the schema is
 * invalid. Injectable because Workers forbid `new Function`, which ajv's code generation needs:
 * the Workers entry supplies validators precompiled at publish time (ajv standalone code, looked
 * up by event name) and maps their `errors` with toViolations.
 */
export type SchemaCompiler = (schema: Record<string, unknown>, eventName: string) => PropertyValidator;

export const MAX_VIOLATIONS = 20;

/** A bundle whose property schemas do not compile; `problems` name each definition. */
export class EventSchemaError extends Error {
  constructor(readonly problems: readonly BundleProblem[]) {
    super(`invalid event property schema: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`);
    this.name = "EventSchemaError";
  }
}

/**
 * ajv's draft 2020-12 compiler. One ajv instance per call, so compiled schemas live as long as
 * the catalog that holds them, never in a process-wide cache that grows with bundle versions.
 */
export function createAjvCompiler(): SchemaCompiler {
  // validateSchema off: schemas are checked explicitly below, for a message that names the field.
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false, validateSchema: false, logger: false });
  return function compileWithAjv(schema) {
    if (!ajv.validateSchema(schema)) throw new Error(ajv.errorsText(ajv.errors, { dataVar: "propertySchema" }));
    try {
      const validate = ajv.compile(schema);
      return function validateProperties(properties) {
        return validate(properties) ? NO_VIOLATIONS : toViolations(validate.errors);
      };
    } finally {
      // Frees the schema's `$id` for the next definition; the compiled function stays usable.
      ajv.removeSchema(schema);
    }
  };
}

/** ajv errors (from ajv or its standalone code) as violations, at most MAX_VIOLATIONS. */
export function toViolations(errors: readonly ErrorObject[] | null | undefined): Violation[] {
  if (!errors) return [];
  return errors.slice(0, MAX_VIOLATIONS).map((e) => ({ path: e.instancePath, message: violationMessage(e) }));
}

// ajv's texts, with the offending property named where ajv leaves it in params.
function violationMessage(e: ErrorObject): string {
  const extra: unknown = e.params.additionalProperty ?? e.params.unevaluatedProperty;
  if (typeof extra === "string") return `must NOT have additional property '${extra}'`;
  return e.message ?? `must pass "${e.keyword}"`;
}

/** `Schema validation failed: /quantity must be >= 1; (root) must have required property 'sku'`. */
export function formatViolations(violations: readonly Violation[]): string {
  const parts = violations.map((v) => `${v.path === "" ? "(root)" : v.path} ${v.message}`);
  return `Schema validation failed: ${parts.join("; ")}`;
}

/** Problems of the definitions' property schemas, as bundle problems; [] when all compile. */
export function schemaProblems(
  definitions: readonly EventDefinition[] | undefined,
  compileSchema: SchemaCompiler = createAjvCompiler(),
): BundleProblem[] {
  return compileAll(definitions ?? [], compileSchema).problems;
}

/**
 * The catalog of a bundle's event definitions. Expects definitions that passed validateBundle
 * (unique names, enforcement warn or reject); throws EventSchemaError when a schema does not
 * compile.
 */
export function compileEventCatalog(
  definitions: readonly EventDefinition[] | undefined,
  compileSchema: SchemaCompiler = createAjvCompiler(),
): EventCatalog {
  const { entries, problems } = compileAll(definitions ?? [], compileSchema);
  if (problems.length > 0) throw new EventSchemaError(problems);
  return {
    check(name, properties) {
      const entry = entries.get(name);
      if (!entry) return UNDEFINED_EVENT;
      if (!entry.validate) return entry.clean;
      const violations = run(entry.validate, properties);
      return violations.length === 0 ? entry.clean : { defined: true, enforcement: entry.clean.enforcement, violations };
    },
  };
}

interface Entry {
  /** This definition's result for valid properties. */
  readonly clean: { readonly defined: true; readonly enforcement: SchemaEnforcement; readonly violations: readonly Violation[] };
  readonly validate: PropertyValidator | undefined;
}

const NO_VIOLATIONS: readonly Violation[] = Object.freeze([]);
const UNDEFINED_EVENT: SchemaCheck = Object.freeze({ defined: false });

function compileAll(
  definitions: readonly EventDefinition[],
  compileSchema: SchemaCompiler,
): { entries: Map<string, Entry>; problems: BundleProblem[] } {
  const entries = new Map<string, Entry>();
  const problems: BundleProblem[] = [];
  definitions.forEach((d, i) => {
    // Names are unique in a valid bundle; should one repeat, the first definition stands.
    if (entries.has(d.name)) return;
    let validate: PropertyValidator | undefined;
    if (d.propertySchema !== undefined) {
      try {
        validate = compileSchema(d.propertySchema, d.name);
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        problems.push({ path: `eventDefinitions[${i}].propertySchema`, message: `event "${d.name}": not a valid JSON Schema: ${why}` });
        return;
      }
    }
    const clean = Object.freeze({ defined: true as const, enforcement: d.schemaEnforcement ?? "warn", violations: NO_VIOLATIONS });
    entries.set(d.name, { clean, validate });
  });
  return { entries, problems };
}

function run(validate: PropertyValidator, properties: unknown): readonly Violation[] {
  try {
    return validate(properties === undefined ? {} : properties);
  } catch {
    // Only exotic input gets here (e.g. nesting deep enough to exhaust the stack): a value that
    // cannot be checked does not conform.
    return [{ path: "", message: "could not be checked against the schema" }];
  }
}
