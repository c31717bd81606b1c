// Small, pure helpers for validate.ts: problem paths, value display, field readers that report
// missing or mistyped fields, parameter-type fit, JSON values and ISO 8601 timestamps.

import type { ParameterType } from "./types.js";
import type { BundleProblem } from "./validate.js";

export type Problems = BundleProblem[];

/** Path of the bundle itself, used only when the input is not an object at all. */
export const ROOT = "(root)";

/** Extends a problem path: `at("layers", 2)` is `layers[2]`, `at("hashing", "unitKey")` is `hashing.unitKey`. */
export function at(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return base === "" ? key : `${base}.${key}`;
}

/** A short rendering of a value for messages (never throws, even on cycles or BigInt). */
export function show(v: unknown): string {
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "symbol") return String(v);
  if (v === undefined) return "undefined";
  if (typeof v === "function") return "a function";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object" && v !== null) return "an object";
  const s = JSON.stringify(v); // string, boolean or null here
  return s.length > 40 ? `${s.slice(0, 37)}..."` : s;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** An own field's value; inherited properties (e.g. `constructor`) never count as present. */
export function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** What a field must hold, with the words used in "must be ..." messages. */
export interface Guard<T> {
  test: (v: unknown) => v is T;
  expected: string;
}

export const NON_EMPTY_STRING: Guard<string> = {
  test: (v): v is string => typeof v === "string" && v.length > 0,
  expected: "a non-empty string",
};
export const STRING: Guard<string> = { test: (v): v is string => typeof v === "string", expected: "a string" };
export const ARRAY: Guard<unknown[]> = { test: (v): v is unknown[] => Array.isArray(v), expected: "an array" };
export const OBJECT: Guard<Record<string, unknown>> = { test: isRecord, expected: "an object" };
export const POSITIVE_NUMBER: Guard<number> = {
  test: (v): v is number => typeof v === "number" && Number.isFinite(v) && v > 0,
  expected: "a positive finite number",
};

export function oneOf<T extends string>(values: readonly T[]): Guard<T> {
  return {
    test: (v): v is T => typeof v === "string" && (values as readonly string[]).includes(v),
    expected: `one of ${values.join(", ")}`,
  };
}

/**
 * Reads and checks the fields of one object, reporting each problem under `base`. A class, not
 * closures: validation makes one per object of the bundle.
 */
export class FieldReader {
  constructor(
    private readonly out: Problems,
    private readonly obj: Record<string, unknown>,
    private readonly base: string,
  ) {}

  /** A required field; reported when absent or not what `guard` wants. */
  need<T>(key: string, guard: Guard<T>): T | undefined {
    const v = own(this.obj, key);
    if (v !== undefined) return this.check(key, v, guard);
    this.out.push({ path: at(this.base, key), message: "is required" });
    return undefined;
  }

  /** An optional field: absent is fine, present must satisfy `guard` (null is not absent). */
  maybe<T>(key: string, guard: Guard<T>): T | undefined {
    const v = own(this.obj, key);
    return v === undefined ? undefined : this.check(key, v, guard);
  }

  /** A required ISO 8601 timestamp; its epoch milliseconds when valid. */
  needTimestamp(key: string): number | undefined {
    return this.timestamp(key, this.need(key, STRING));
  }

  /** An optional ISO 8601 timestamp; its epoch milliseconds when present and valid. */
  maybeTimestamp(key: string): number | undefined {
    return this.timestamp(key, this.maybe(key, STRING));
  }

  private check<T>(key: string, v: unknown, guard: Guard<T>): T | undefined {
    if (guard.test(v)) return v;
    this.out.push({ path: at(this.base, key), message: mustBe(guard.expected, v) });
    return undefined;
  }

  private timestamp(key: string, s: string | undefined): number | undefined {
    if (s === undefined) return undefined;
    const ms = isoTimestampMs(s);
    if (ms === undefined) this.out.push({ path: at(this.base, key), message: mustBe("an ISO 8601 timestamp with a time zone", s) });
    return ms;
  }
}

/** A reader of `obj`'s fields: `fields(out, layer, "layers[0]").need("id", NON_EMPTY_STRING)`. */
export function fields(out: Problems, obj: Record<string, unknown>, base: string): FieldReader {
  return new FieldReader(out, obj, base);
}

export function mustBe(expected: string, got: unknown): string {
  return `must be ${expected} (got ${show(got)})`;
}

/** True for what JSON can carry: no undefined, functions, NaN/Infinity, class instances or cycles. */
export function isJsonValue(v: unknown, ancestors: object[] = []): boolean {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v !== "object" || ancestors.includes(v)) return false;
  ancestors.push(v);
  const ok = Array.isArray(v) ? jsonArray(v, ancestors) : isPlainObject(v) && Object.values(v).every((x) => isJsonValue(x, ancestors));
  ancestors.pop();
  return ok;
}

function jsonArray(a: unknown[], ancestors: object[]): boolean {
  // An index loop, not every(): a hole is undefined, which JSON cannot carry.
  for (let i = 0; i < a.length; i++) if (!isJsonValue(a[i], ancestors)) return false;
  return true;
}

function isPlainObject(v: object): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const FITS: Record<ParameterType, Guard<unknown>> = {
  string: { test: (v): v is string => typeof v === "string", expected: "a string" },
  boolean: { test: (v): v is boolean => typeof v === "boolean", expected: "a boolean" },
  number: { test: (v): v is number => typeof v === "number" && Number.isFinite(v), expected: "a finite number" },
  integer: { test: (v): v is number => Number.isInteger(v), expected: "an integer" },
  json: { test: (v): v is unknown => isJsonValue(v), expected: "a JSON value" },
};

/** Why `value` cannot be served for a parameter of `type`, or undefined when it fits. */
export function valueProblem(type: ParameterType, value: unknown, paramKey: string): string | undefined {
  const fit = FITS[type];
  return fit.test(value) ? undefined : `${show(value)} is not ${fit.expected} (parameter ${paramKey})`;
}

// Date and time with a zone: a zone-less time would depend on the server's local time zone.
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|([+-])(\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch of an ISO 8601 timestamp, or undefined when `s` is not one. */
export function isoTimestampMs(s: string): number | undefined {
  const m = ISO_TIMESTAMP.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second, offH, offM] = [1, 2, 3, 4, 5, 6, 10, 11].map((i) => Number(m[i] ?? 0)) as [
    number, number, number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offH > 23 || offM > 59) return undefined;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day); // unlike Date.UTC, keeps years 0..99 as written
  d.setUTCHours(hour, minute, second, Math.floor(Number(m[7] ?? 0) * 1000));
  const offset = (m[9] === "-" ? -1 : 1) * (offH * 60 + offM);
  return d.getTime() - offset * 60_000;
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}
