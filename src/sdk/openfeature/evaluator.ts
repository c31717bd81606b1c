// One OpenFeature evaluation on Vane's client: the flag (a parameter) resolved locally for the
// context with the client's readFlag (resolveFlag's read of the flag's layer alone, without the
// answer's objects; its exposure recorded as for any local resolve, unless the value is not of the
// type asked for: the caller then shows its default, TYPE_MISMATCH), and its details read from
// the bundle exactly as the OFREP endpoints read them
// (src/bundle/openfeature.ts). Shared by the server and the web provider; OpenFeature's error
// codes are returned, not thrown, so an evaluation never fails the caller.
import type { ErrorCode, EvaluationContext, FlagValueType, ResolutionDetails, ResolutionReason, TrackingEventDetails } from "@openfeature/core";
import { FlagIndex, vaneContext } from "../../bundle/openfeature.js";
import type { Bundle } from "../../bundle/types.js";
import { fits } from "../flag-values.js";
import type { VaneClient } from "../types.js";

const ERROR_REASON = "ERROR" as ResolutionReason;

export class FlagEvaluator {
  private index: FlagIndex | undefined;

  constructor(private readonly client: () => VaneClient | undefined) {}

  evaluate<T>(flagKey: string, defaultValue: T, context: EvaluationContext, type: FlagValueType): ResolutionDetails<T> {
    const client = this.client();
    const bundle = client?.bundle;
    if (client === undefined || bundle === undefined) return failed(defaultValue, "PROVIDER_NOT_READY", "Vane has no bundle yet");
    const index = this.indexFor(bundle);
    const layerId = index.layerOf.get(flagKey);
    if (layerId === undefined) return failed(defaultValue, "FLAG_NOT_FOUND", `Flag '${flagKey}' was not found`);
    let read;
    try {
      // Without a targetingKey the context is Vane's as it is: no copy made per evaluation.
      read = client.readFlag(Object.hasOwn(context, "targetingKey") ? vaneContext(context, bundle.hashing.unitKey) : context, flagKey, type);
    } catch (error) {
      return failed(defaultValue, "INVALID_CONTEXT", error instanceof Error ? error.message : String(error));
    }
    if (read.value === undefined) return failed(defaultValue, "FLAG_NOT_FOUND", `Flag '${flagKey}' was not found`);
    if (!fits(read.value, type)) return failed(defaultValue, "TYPE_MISMATCH", `Flag '${flagKey}' is not of type ${type}`);
    // The details' metadata is made for this evaluation: the decision id joins it, no copy.
    const details = index.layerDetails(layerId, read.value, read.layer);
    details.metadata.decisionId = read.decisionId;
    const resolved: ResolutionDetails<T> = { value: read.value as T, reason: details.reason as ResolutionReason, flagMetadata: details.metadata };
    if (details.variant !== undefined) resolved.variant = details.variant;
    return resolved;
  }

  /** OpenFeature's track: a Vane track event for the context's unit (else the last resolved one), with `value` and the other details as properties. */
  track(name: string, context: EvaluationContext, details: TrackingEventDetails | undefined): void {
    const client = this.client();
    if (client === undefined) return;
    const bundle = client.bundle;
    const unit = bundle === undefined ? undefined : vaneContext(context, bundle.hashing.unitKey)[bundle.hashing.unitKey];
    const { value, ...properties } = details ?? {};
    client.track(name, {
      ...(typeof unit === "string" || typeof unit === "number" ? { unitKey: String(unit) } : {}),
      ...(typeof value === "number" ? { value } : {}),
      ...(Object.keys(properties).length > 0 ? { properties } : {}),
    });
  }

  private indexFor(bundle: Bundle): FlagIndex {
    if (this.index?.bundle !== bundle) this.index = new FlagIndex(bundle);
    return this.index;
  }
}

function failed<T>(value: T, errorCode: string, errorMessage: string): ResolutionDetails<T> {
  return { value, reason: ERROR_REASON, errorCode: errorCode as ErrorCode, errorMessage };
}
