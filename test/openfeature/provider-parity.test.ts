// The providers read a flag with the client's readFlag and build its details from the layer's
// facts (FlagIndex.layerDetails) instead of building resolveFlag's answer and reading the details
// out of it. What an evaluation returns and what it records must not change: on random bundles
// and contexts (with and without targetingKey, units of other types, no unit, unknown flags,
// every value type asked for), an evaluation equals the answer built the earlier way (resolved
// alone, its details read from the answer's layer), and the clients send the same
// exposures as one resolving each flag alone with resolveLocal.
import type { EvaluationContext, FlagValueType, ResolutionDetails } from "@openfeature/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FlagIndex, vaneContext } from "../../src/bundle/openfeature.js";
import type { JsonValue } from "../../src/bundle/types.js";
import type { VaneClient } from "../../src/sdk/index.js";
import { VaneWebProvider } from "../../src/sdk/openfeature/index.js";
import { arbitraryBundle } from "../bundle/bundles.js";
import { recorder } from "../sdk/helpers.js";

const T0 = Date.parse("2026-11-21T12:00:00Z");
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;


/**
 * The evaluation as the evaluator built it before readFlag, written out here so that no details
 * code is shared: resolveFlag's answer, its details read as FlagIndex.details read them then. The
 * flag is also resolved alone by resolveLocal on `alone`, whose exposures the provider's must equal.
 */
function earlierEvaluation(client: VaneClient, alone: VaneClient, flagKey: string, defaultValue: unknown, context: EvaluationContext, type: FlagValueType): ResolutionDetails<unknown> {
  const bundle = client.bundle!;
  const index = new FlagIndex(bundle);
  const failed = (errorCode: string, errorMessage: string) => ({ value: defaultValue, reason: "ERROR", errorCode, errorMessage }) as ResolutionDetails<unknown>;
  if (!index.has(flagKey)) return failed("FLAG_NOT_FOUND", `Flag '${flagKey}' was not found`);
  let result;
  let fits;
  try {
    const vane = Object.hasOwn(context, "targetingKey") ? vaneContext(context, bundle.hashing.unitKey) : context;
    result = client.resolveFlag(vane, flagKey, type);
    const value = result.assignments[flagKey]!;
    fits = type === "object" ? typeof value === "object" : typeof value === type;
    // A value refused for its type is not exposed: the caller shows its default.
    if (fits) alone.resolveLocal(vane, [flagKey]);
  } catch (error) {
    return failed("INVALID_CONTEXT", error instanceof Error ? error.message : String(error));
  }
  const layerId = index.layerOf.get(flagKey)!;
  const value = result.assignments[flagKey]!;
  if (!fits) return failed("TYPE_MISMATCH", `Flag '${flagKey}' is not of type ${type}`);
  const metadata: Record<string, string | number | boolean> = { layerId, configVersion: bundle.version };
  const resolved: ResolutionDetails<unknown> = { value, reason: "DEFAULT", flagMetadata: metadata };
  const layer = result.metadata.layers.find((l) => l.layerId === layerId);
  if (layer !== undefined) {
    metadata.bucket = layer.bucket;
    const policy = layer.policyId === undefined ? undefined : index.policy(layer.policyId);
    if (policy !== undefined && layer.allocationId !== undefined) {
      const allocationKey = policy.allocations.get(layer.allocationId)!;
      metadata.policyKey = policy.key;
      metadata.allocationKey = allocationKey;
      resolved.variant = allocationKey;
      resolved.reason = policy.reason;
    }
  }
  metadata.decisionId = result.decisionId;
  return { value: resolved.value, ...(resolved.variant === undefined ? {} : { variant: resolved.variant }), reason: resolved.reason, flagMetadata: metadata };
}

const DEFAULTS: Record<FlagValueType, unknown> = { boolean: false, string: "fallback", number: -1, object: { fallback: true } };

function evaluate(provider: VaneWebProvider, key: string, context: EvaluationContext, type: FlagValueType): ResolutionDetails<unknown> {
  if (type === "boolean") return provider.resolveBooleanEvaluation(key, false, context);
  if (type === "string") return provider.resolveStringEvaluation(key, "fallback", context);
  if (type === "number") return provider.resolveNumberEvaluation(key, -1, context);
  return provider.resolveObjectEvaluation(key, { fallback: true } as JsonValue, context);
}

/** A read: whose context, how its unit is given, which flag, which type asked for. */
const read = fc.record({
  user: fc.constantFrom(0, 1, 2),
  unit: fc.constantFrom("userId", "targetingKey", "both", "number", "none", "invalid"),
  parameter: fc.nat(),
  type: fc.constantFrom<FlagValueType>("boolean", "string", "number", "object"),
  plan: fc.constantFrom("gold", "free"),
});

function contextOf(user: number, unit: string, plan: string): EvaluationContext {
  const fields: EvaluationContext = { accountId: `acct-${user % 2}`, country: "NL", plan, appVersion: "2.1.0" };
  if (unit === "userId") return { ...fields, userId: `user-${user}` };
  if (unit === "targetingKey") return { ...fields, targetingKey: `user-${user}` };
  if (unit === "both") return { ...fields, userId: `user-${user}`, targetingKey: "ignored" };
  if (unit === "number") return { ...fields, userId: user };
  if (unit === "invalid") return { ...fields, userId: { not: "a unit" } as unknown as string };
  return fields;
}

/** An event as two sessions can agree on it: without its own, its session's and its decision's ids. */
const comparable = ({ sessionId: _s, decisionId: _d, id: _i, ...rest }: Record<string, unknown>) => rest;
const withoutDecision = (details: ResolutionDetails<unknown>) => {
  if (details.flagMetadata === undefined) return details;
  const { decisionId: _d, ...metadata } = details.flagMetadata;
  return { ...details, flagMetadata: metadata };
};

describe("an OpenFeature provider's evaluation", () => {
  it("returns and records what it did when built from resolveFlag's answer", async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryBundle, fc.array(read, { minLength: 1, maxLength: 30 }), async (bundle, reads) => {
        const [now, earlier, alone] = [await recorder(bundle, () => T0), await recorder(bundle, () => T0), await recorder(bundle, () => T0)];
        const provider = new VaneWebProvider({ client: now.client });
        const keys = [...bundle.parameters.map((p) => p.key), "no-such-flag"];
        const decisionIds = new Set<string>();
        for (const { user, unit, parameter, type, plan } of reads) {
          const key = keys[parameter % keys.length]!;
          const context = contextOf(user, unit, plan);
          const got = evaluate(provider, key, context, type);
          const expected = earlierEvaluation(earlier.client, alone.client, key, DEFAULTS[type], context, type);
          expect(withoutDecision(got)).toEqual(withoutDecision(expected));
          expect(Object.keys(got.flagMetadata ?? {})).toEqual(Object.keys(expected.flagMetadata ?? {}));
          if (expected.flagMetadata !== undefined) {
            expect(got.flagMetadata?.decisionId).toMatch(UUID_V7);
            decisionIds.add(got.flagMetadata!.decisionId as string);
          }
        }
        await Promise.all([now.client.close(), earlier.client.close(), alone.client.close()]);
        expect(now.events.map(comparable)).toEqual(earlier.events.map(comparable));
        expect(now.events.map(comparable)).toEqual(alone.events.map(comparable));
        // An exposure names the decision of the evaluation that recorded it (one refused for its type records none).
        for (const event of now.events) if (event.type === "exposure") expect(decisionIds).toContain(event.decisionId);
      }),
      { numRuns: 150 },
    );
  });
});
