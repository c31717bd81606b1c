// Typed reads of one parameter from a resolution, as flag SDKs offer them (LaunchDarkly's
// variationDetail, OpenFeature's resolution details): the value, or the caller's default when the
// parameter is unknown or of another type, with the reason and the layer that decided. Never throws.
import type { ResolveResponse, ResolvedLayer } from "../bundle/response.js";
import type { JsonValue } from "../bundle/types.js";

export type ValueType = "boolean" | "string" | "number" | "json";
/** The type a flag read asks for: a getter's (ValueType: "json" takes any value) or OpenFeature's "object" (any JSON structure, null included). */
export type WantedType = ValueType | "object";

/** Whether `value` is of the type asked for. A value that is not is not exposed: the caller gets its default, not the variant. */
export function fits(value: JsonValue, wanted: WantedType): boolean {
  return wanted === "json" || (wanted === "object" ? typeof value === "object" : typeof value === wanted);
}

/** The type a default stands for: `"blue"` asks for a string; an object, array or null default takes any value. */
export function wantedBy(defaultValue: unknown): ValueType {
  const type = typeof defaultValue;
  return type === "boolean" || type === "string" || type === "number" ? type : "json";
}

/** OpenFeature's reasons: SPLIT (a policy's allocation), DEFAULT (the bundle's default), ERROR (the caller's default). */
export type Reason = "SPLIT" | "DEFAULT" | "ERROR";
export type ErrorCode = "FLAG_NOT_FOUND" | "TYPE_MISMATCH" | "PROVIDER_NOT_READY" | "INVALID_CONTEXT";

export interface Details<T> {
  readonly value: T;
  readonly reason: Reason;
  /** The allocation's name when a policy allocated the unit. */
  readonly variant?: string;
  /** The layer of the parameter as resolved: its bucket, policy and allocation. */
  readonly layer?: ResolvedLayer;
  readonly errorCode?: ErrorCode;
  /** The decision this value came from (track events attribute to it). */
  readonly decisionId?: string;
}

/** The type a default stands for: `"blue"` asks for any string, `false` for any boolean. */
export type Widen<T> = T extends string ? string : T extends number ? number : T extends boolean ? boolean : T;

export function errorDetails<T>(value: T, errorCode: ErrorCode): Details<T> {
  return { value, reason: "ERROR", errorCode };
}

/** The details of parameter `key` in `result`, `fallback` when it is missing or not of `type`. */
export function detailsOf<T>(result: ResolveResponse, key: string, fallback: T, type: ValueType): Details<T> {
  const { assignments, metadata, decisionId } = result;
  if (!Object.hasOwn(assignments, key)) return errorDetails(fallback, "FLAG_NOT_FOUND");
  const value = assignments[key] as JsonValue;
  if (!fits(value, type)) return errorDetails(fallback, "TYPE_MISMATCH");
  // Asked for alone, the parameter's layer is the only one resolved for more than attribution.
  const layer = metadata.layers.find((l) => !l.attributionOnly);
  const allocated = layer?.allocationId !== undefined;
  return { value: value as T, reason: allocated ? "SPLIT" : "DEFAULT", variant: allocated ? layer.allocationName : undefined, layer, decisionId };
}
