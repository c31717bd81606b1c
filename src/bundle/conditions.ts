// Targeting conditions (decisions.md §4): GrowthBook's MongoDB-style targeting language, compiled
// once into closures so that evaluation on the resolution hot path is only field reads and
// comparisons. Semantics follow GrowthBook's sdk-js (mongrule.ts) as pinned by its cross-SDK cases
// (test/fixtures/growthbook-cases.json, `evalCondition`). Where GrowthBook coerces a missing or
// structured value into text or a number by accident, this evaluator does not match instead.
//
// A condition that cannot be compiled (not an object, an unknown operator, a bad regex, an operand
// of the wrong shape) never matches: the whole condition is false, even under $not or $nor, so a
// typo can never widen an audience. Nothing here throws to the caller.

import { versionTest } from "./versions.js";

export type ConditionPredicate = (context: Record<string, unknown>) => boolean;
export type SavedGroups = Readonly<Record<string, readonly unknown[]>>;

/** Tests one thing: a document (the context, an $elemMatch element) or a value found in it. */
type Test = (subject: unknown) => boolean;
type Ordering = "$lt" | "$lte" | "$gt" | "$gte";

/** Abandons compiling a malformed condition; caught in compileCondition, never escapes it. */
class InvalidCondition extends Error {}

const ALWAYS: Test = () => true;
/** Missing and null are the same thing to conditions (GrowthBook's getPath returns null). */
const isMissing: Test = (value) => value == null;
const isPresent: Test = (value) => value != null;
const NEVER: ConditionPredicate = () => false;
const NO_GROUPS: SavedGroups = Object.freeze({});

/** Compiles one condition object to a closure once (regexes compiled once, version strings padded once); the closure never throws. */
export function compileCondition(condition: unknown, savedGroups: SavedGroups = NO_GROUPS): ConditionPredicate {
  let test: Test;
  try {
    test = compileDocument(condition, savedGroups);
  } catch {
    return NEVER; // malformed, or too deep / cyclic to compile
  }
  return (context) => {
    try {
      return test(context);
    } catch {
      return false; // a context with throwing getters or proxies, or absurdly deep values
    }
  };
}

/**
 * Why `condition` cannot be compiled (an unknown operator, a bad regex, an operand of the wrong
 * shape), or undefined when it compiles: publishing refuses what would otherwise never match.
 */
export function conditionProblem(condition: unknown, savedGroups: SavedGroups = NO_GROUPS): string | undefined {
  try {
    compileDocument(condition, savedGroups);
    return undefined;
  } catch (error) {
    return error instanceof InvalidCondition ? error.message : "cannot be compiled (too deep or cyclic)";
  }
}

/**
 * The context's top-level fields a condition can read (a dotted path's first step), or undefined
 * when that cannot be told (too deep or cyclic: such a condition never matches anyway). A memo of
 * a condition's result is valid while these fields hold the same values. Paths inside $elemMatch
 * read the elements of a field already named, so only documents at the top are walked.
 */
export function conditionFields(condition: unknown): Set<string> | undefined {
  const fields = new Set<string>();
  try {
    addFields(condition, fields);
  } catch {
    return undefined;
  }
  return fields;
}

function addFields(condition: unknown, fields: Set<string>): void {
  if (!isObject(condition)) return; // malformed: never matches, reads nothing
  for (const key of Object.keys(condition)) {
    const arg = condition[key];
    if (key === "$and" || key === "$or" || key === "$nor") {
      if (Array.isArray(arg)) for (const item of arg) addFields(item, fields);
    } else if (key === "$not") addFields(arg, fields);
    else fields.add(key.split(".", 1)[0]!);
  }
}

/** Every operator conditions know, for "did you mean". */
export function conditionOperators(): string[] {
  return ["$and", "$or", "$nor", ...Object.keys(OPERATORS)];
}

/** Convenience: compile and evaluate. */
export function evalCondition(context: Record<string, unknown>, condition: unknown, savedGroups?: SavedGroups): boolean {
  return compileCondition(condition, savedGroups)(context);
}

// ---- Documents: { path: value-condition, $and/$or/$nor: [...], $not: {...} } ----

function compileDocument(condition: unknown, groups: SavedGroups): Test {
  if (!isObject(condition)) return invalid("a condition must be an object");
  return allOf(Object.entries(condition).map(([key, arg]) => compileEntry(key, arg, groups)));
}

function compileEntry(key: string, arg: unknown, groups: SavedGroups): Test {
  switch (key) {
    case "$and": return allOf(compileDocuments(arg, groups));
    case "$or": return anyOf(compileDocuments(arg, groups));
    case "$nor": return not(anyOf(compileDocuments(arg, groups)));
    case "$not": return not(compileDocument(arg, groups));
    default: return atPath(key, compileValue(arg, groups)); // any other key, "$groups" too, is a path
  }
}

function compileDocuments(arg: unknown, groups: SavedGroups): Test[] {
  if (!Array.isArray(arg)) return invalid("$and/$or/$nor take an array");
  return arg.map((condition) => compileDocument(condition, groups));
}

/** Dotted paths, as in GrowthBook's getPath; a missing value is null. */
function atPath(path: string, test: Test): Test {
  const steps = path.split(".").map((key) => ({ key, ownOnly: isBuiltInMember(key) }));
  const [only] = steps;
  if (steps.length === 1 && only !== undefined) return (doc) => test(field(doc, only));
  return (doc) => {
    let value = doc;
    for (const step of steps) if (value !== null) value = field(value, step);
    return test(value);
  };
}

/**
 * "constructor" or "toString" are attributes only as own properties, never inherited from a
 * built-in prototype. Other names may be inherited, as with GrowthBook's `in`; deciding this at
 * compile time spares the hot path an ownership check per field.
 */
function isBuiltInMember(key: string): boolean {
  return key in Object.prototype || key in Array.prototype;
}

/** One step of a dotted path: the key, and whether only an own property counts. */
interface Step {
  key: string;
  ownOnly: boolean;
}

function field(doc: unknown, step: Step): unknown {
  const { key, ownOnly } = step;
  if (typeof doc !== "object" || doc === null) return null;
  const value = (doc as Record<string, unknown>)[key];
  return value === undefined || (ownOnly && !Object.hasOwn(doc, key)) ? null : value;
}

// ---- Values: a literal to equal, or an object of operators that must all hold ----

function compileValue(expected: unknown, groups: SavedGroups): Test {
  switch (typeof expected) {
    case "string":
      return equalsText(expected);
    case "number":
      return (value) => looseNumber(value) === expected;
    case "boolean":
      // Truthiness, as in GrowthBook, but a missing attribute is neither true nor false.
      return (value) => value != null && Boolean(value) === expected;
    case "object":
      if (expected === null) return isMissing;
      if (!isOperatorObject(expected)) return equalsJson(expected);
      return allOf(Object.entries(expected).map(([op, arg]) => compileOperator(op, arg, groups)));
    default:
      return invalid("not a JSON value");
  }
}

/** As compileValue, but a string literal is case-insensitive (only $alli asks, for its own items). */
function compileValueIgnoringCase(expected: unknown, groups: SavedGroups): Test {
  return typeof expected === "string" ? equalsTextIgnoringCase(expected) : compileValue(expected, groups);
}

/** Only an object whose keys all start with "$" is operators; any other object is a literal. */
function isOperatorObject(value: object): boolean {
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((key) => key.startsWith("$"));
}

/** Compiles each operator's operand into a test of the value; the operand is checked here, once. */
const OPERATORS: Readonly<Record<string, (arg: unknown, groups: SavedGroups) => Test>> = {
  $eq: (arg) => equalsExactly(arg),
  $ne: (arg) => not(equalsExactly(arg)),
  $lt: (arg) => compareTo("$lt", arg),
  $lte: (arg) => compareTo("$lte", arg),
  $gt: (arg) => compareTo("$gt", arg),
  $gte: (arg) => compareTo("$gte", arg),
  $exists: (arg) => (arg ? isPresent : isMissing),
  $type: (arg) => hasType(arg),
  $in: (arg) => isIn(listOperand(arg)),
  $nin: (arg) => not(isIn(listOperand(arg))),
  $ini: (arg) => isInIgnoringCase(listOperand(arg)),
  $nini: (arg) => not(isInIgnoringCase(listOperand(arg))),
  $inGroup: (arg, groups) => isIn(groupMembers(arg, groups)),
  $notInGroup: (arg, groups) => not(isIn(groupMembers(arg, groups))),
  $all: (arg, groups) => containsAll(listOperand(arg).map((item) => compileValue(item, groups))),
  $alli: (arg, groups) => containsAll(listOperand(arg).map((item) => compileValueIgnoringCase(item, groups))),
  $elemMatch: (arg, groups) => someElement(arg, groups),
  $size: (arg, groups) => hasLength(compileValue(arg, groups)),
  $not: (arg, groups) => not(compileValue(arg, groups)),
  $regex: (arg) => matchesPattern(arg, ""),
  $regexi: (arg) => matchesPattern(arg, "i"),
  $veq: (arg) => versionTest("$veq", arg),
  $vne: (arg) => versionTest("$vne", arg),
  $vgt: (arg) => versionTest("$vgt", arg),
  $vgte: (arg) => versionTest("$vgte", arg),
  $vlt: (arg) => versionTest("$vlt", arg),
  $vlte: (arg) => versionTest("$vlte", arg),
};

function compileOperator(op: string, arg: unknown, groups: SavedGroups): Test {
  const compile = Object.hasOwn(OPERATORS, op) ? OPERATORS[op] : undefined;
  return compile ? compile(arg, groups) : invalid(`unknown operator ${op}`);
}

// ---- Equality ----

/** GrowthBook compares a string literal to the value as text: 10 equals "10", true equals "true". */
function equalsText(expected: string): Test {
  return (value) => (typeof value === "string" ? value === expected : scalarText(value) === expected);
}

function equalsTextIgnoringCase(expected: string): Test {
  const folded = expected.toLowerCase();
  return (value) => scalarText(value)?.toLowerCase() === folded;
}

/** $eq/$ne: strict for scalars; arrays and objects compare by structure, not identity. */
function equalsExactly(expected: unknown): Test {
  return typeof expected === "object" && expected !== null ? equalsJson(expected) : (value) => value === expected;
}

function equalsJson(expected: object): Test {
  return (value) => jsonEqual(expected, value);
}

/** Structural equality of JSON values; key order does not matter. Recursion is bounded by `a`. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}

// ---- Ordering: JavaScript's relational comparison, restricted to scalars ----

const ORDERINGS: Readonly<Record<Ordering, (order: number) => boolean>> = {
  $lt: (order) => order < 0,
  $lte: (order) => order <= 0,
  $gt: (order) => order > 0,
  $gte: (order) => order >= 0,
};

/**
 * Two strings compare as text; anything else compares as numbers, with a missing value as 0
 * (GrowthBook's cases need `{age: {$gt: -10}}` to match a context without age).
 */
function compareTo(op: Ordering, operand: unknown): Test {
  if (typeof operand === "object" && operand !== null) return invalid(`${op} takes a scalar`);
  const holds = ORDERINGS[op];
  const number = relationalNumber(operand);
  if (typeof operand !== "string") return (value) => holds(order(relationalNumber(value), number));
  return (value) => holds(typeof value === "string" ? order(value, operand) : order(relationalNumber(value), number));
}

/** -1, 0 or 1; NaN when the two are unordered (a NaN number), so every ordering test fails. */
function order<T extends string | number>(a: T, b: T): number {
  if (a < b) return -1;
  if (a > b) return 1;
  return a === b ? 0 : Number.NaN;
}

/** JavaScript's ToNumber for scalars (null is 0, "" is 0); arrays and objects are unordered. */
function relationalNumber(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" || typeof value === "boolean") return Number(value);
  return value === null ? 0 : Number.NaN;
}

/** For number literals: numeric text counts, but blank text, null and structures do not equal 0. */
function looseNumber(value: unknown): number {
  if (typeof value === "string") return value.trim() === "" ? Number.NaN : Number(value);
  return typeof value === "number" || typeof value === "boolean" ? Number(value) : Number.NaN;
}

// ---- Membership ----

/** A scalar must be in the list; an array attribute must share at least one item with it. */
function isIn(list: readonly unknown[]): Test {
  const members = new Set(list);
  return scalarOrSomeItem((item) => members.has(item));
}

/** As isIn, but strings compare case-insensitively. */
function isInIgnoringCase(list: readonly unknown[]): Test {
  const members = new Set(list.map(fold));
  return scalarOrSomeItem((item) => members.has(fold(item)));
}

function scalarOrSomeItem(has: (item: unknown) => boolean): Test {
  return (value) => (Array.isArray(value) ? value.some(has) : has(value));
}

function fold(value: unknown): unknown {
  return typeof value === "string" ? value.toLowerCase() : value;
}

/** An unknown group is empty: $inGroup never matches it, $notInGroup always does. */
function groupMembers(name: unknown, groups: SavedGroups): readonly unknown[] {
  if (typeof name !== "string") return invalid("$inGroup/$notInGroup take a group name");
  const members = isObject(groups) && Object.hasOwn(groups, name) ? groups[name] : undefined;
  return Array.isArray(members) ? members : [];
}

/** Each test, compiled from an item of the operand (a literal or an operator object), must match some element. */
function containsAll(tests: readonly Test[]): Test {
  return (value) => Array.isArray(value) && tests.every((test) => value.some(test));
}

function hasLength(test: Test): Test {
  return (value) => Array.isArray(value) && test(value.length);
}

/**
 * Operators apply to each element itself; a plain condition treats each element as a document.
 * Unlike GrowthBook's JS SDK, falsy elements (0, "", false) are tested too, as in MongoDB.
 */
function someElement(arg: unknown, groups: SavedGroups): Test {
  if (!isObject(arg)) return invalid("$elemMatch takes an object");
  const test = isOperatorObject(arg) ? compileValue(arg, groups) : compileDocument(arg, groups);
  return (value) => Array.isArray(value) && value.some((element) => test(element));
}

function listOperand(arg: unknown): readonly unknown[] {
  return Array.isArray(arg) ? arg : invalid("operator takes an array");
}

// ---- Patterns and types ----

/** The pattern is compiled here, once; an invalid one makes the whole condition false. */
function matchesPattern(pattern: unknown, flags: "" | "i"): Test {
  if (typeof pattern !== "string") return invalid("$regex takes a string");
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, flags); // no "g" or "y": test() keeps no state between calls
  } catch {
    return invalid(`bad pattern ${pattern}`);
  }
  return (value) => {
    const text = scalarText(value);
    return text !== undefined && regex.test(text);
  };
}

function hasType(name: unknown): Test {
  if (typeof name !== "string") return invalid("$type takes a type name");
  return (value) => typeName(value) === name;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  const type = typeof value;
  return type === "string" || type === "number" || type === "boolean" || type === "object" || type === "undefined" ? type : "unknown";
}

// ---- Small helpers ----

function allOf(tests: readonly Test[]): Test {
  const [first, second] = tests;
  if (first === undefined) return ALWAYS;
  if (second === undefined) return first;
  if (tests.length === 2) return (subject) => first(subject) && second(subject);
  return (subject) => {
    for (const test of tests) if (!test(subject)) return false; // a plain loop: no closure per call
    return true;
  };
}

/** An empty $or matches, as in GrowthBook (so an empty $nor never does). */
function anyOf(tests: readonly Test[]): Test {
  if (tests.length === 0) return ALWAYS;
  return (subject) => {
    for (const test of tests) if (test(subject)) return true;
    return false;
  };
}

function not(test: Test): Test {
  return (subject) => !test(subject);
}

/** Text of a scalar; undefined for null, arrays and objects (GrowthBook would match "null" or "a,b"). */
function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  return typeof value === "number" || typeof value === "boolean" ? String(value) : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(reason: string): never {
  throw new InvalidCondition(reason);
}
