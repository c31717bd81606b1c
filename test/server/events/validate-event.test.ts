import { describe, expect, it } from "vitest";
import { validateEvent, type EventValidation } from "../../../src/server/events/validate-event.js";

// Events as SDKs send them: an exposure of two layers (one adaptive, with its propensity), a
// purchase, and a decision as /v1/resolve records it.
const EXPOSURE = {
  type: "exposure",
  unitKey: "user-42",
  timestamp: "2026-03-14T09:26:53.589Z",
  assignments: { "checkout.color": "green", "search.pageSize": 20 },
  layers: [
    { layerId: "checkout", bucket: 517, policyId: "pol_color", policyKey: "checkout-color-test", allocationName: "treatment", allocationKey: "green" },
    { layerId: "search", bucket: 0, policyId: "pol_rank", policyKey: "ranking-bandit", allocationKey: "bm25", probability: 0.25 },
  ],
  decisionId: "dec_01",
  configVersion: "2026-03-14T09:00:00.000Z",
  userId: "u-42",
  sessionId: "s-9",
  sdkName: "vane-js",
  sdkVersion: "0.1.0",
};
const TRACK = {
  type: "track",
  unitKey: "user-42",
  timestamp: "2026-03-14T09:27:10+01:00",
  event: "purchase",
  value: 49.9,
  values: { revenue: 49.9, items: 2 },
  properties: { sku: "A-1", quantity: 2, tags: ["sale"] },
  decisionId: "dec_01",
  attribution: [{ decisionId: "dec_01", layerId: "checkout" }],
  projectId: "proj_storefront",
  env: "production",
};
const DECISION = {
  type: "decision",
  unitKey: "user-42",
  timestamp: "2026-03-14T09:26:53Z",
  assignments: { "checkout.color": "green" },
  layers: [{ layerId: "checkout", bucket: 999, allocationName: "treatment" }],
  latencyMs: 0,
};

function errorOf(result: EventValidation): string | undefined {
  return "error" in result ? result.error : undefined;
}

function with_(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base, ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete out[k];
  return out;
}

function layer(patch: Record<string, unknown>): Record<string, unknown> {
  return with_({ type: "exposure", unitKey: "u", timestamp: "2026-01-01T00:00:00Z", assignments: {} }, {
    layers: [{ layerId: "a", bucket: 1 }, { layerId: "b", bucket: 2 }, with_({ layerId: "c", bucket: 3 }, patch)],
  });
}

describe("validateEvent: valid events", () => {
  it.each([
    ["exposure", EXPOSURE],
    ["track", TRACK],
    ["decision", DECISION],
  ])("accepts a full %s event and gives the typed view, the body being the event itself", (_, raw) => {
    const result = validateEvent(raw);
    expect(errorOf(result)).toBeUndefined();
    if (!("event" in result)) return;
    expect(result.event.body).toBe(raw);
    expect(result.event.type).toBe(raw.type);
    expect(result.event.unitKey).toBe("user-42");
    expect(result.event.timestamp).toBe(raw.timestamp);
  });

  it("pulls out a track event's name, properties, decisionId, projectId and env", () => {
    const result = validateEvent(TRACK);
    expect(result).toEqual({
      event: {
        type: "track", unitKey: "user-42", timestamp: TRACK.timestamp, name: "purchase", decisionId: "dec_01",
        projectId: "proj_storefront", env: "production", properties: TRACK.properties, body: TRACK,
      },
    });
  });

  it("gives no name or properties for other types, even when such fields are sent", () => {
    const raw = with_(EXPOSURE, { event: "purchase", properties: { a: 1 } });
    const result = validateEvent(raw);
    expect(result).toMatchObject({ event: { type: "exposure", name: undefined, properties: undefined, decisionId: "dec_01" } });
  });

  it("keeps unknown fields (orgId included) in the body as given", () => {
    const raw = with_(TRACK, { orgId: "org_other", pageUrl: "/cart", nested: { deep: [1, null] } });
    const result = validateEvent(raw);
    expect(result).toMatchObject({ event: { body: { orgId: "org_other", pageUrl: "/cart", nested: { deep: [1, null] } } } });
  });

  it("accepts the minimal event of each type", () => {
    const base = { unitKey: "u", timestamp: "2026-01-01T00:00:00Z" };
    expect(errorOf(validateEvent({ ...base, type: "track", event: "signup" }))).toBeUndefined();
    expect(errorOf(validateEvent({ ...base, type: "exposure", assignments: {}, layers: [] }))).toBeUndefined();
    expect(errorOf(validateEvent({ ...base, type: "decision", assignments: {}, layers: [] }))).toBeUndefined();
  });

  it.each([
    "2026-03-14T09:26:53Z",
    "2026-03-14T09:26:53.5Z",
    "2026-03-14T09:26:53.123456789Z",
    "2026-03-14T09:26:53+05:30",
    "2026-03-14T09:26:53-08:00",
    "2026-03-14T09:26Z",
    "2024-02-29T23:59:59Z",
    "2000-02-29T00:00:00Z",
  ])("accepts the timestamp %s", (timestamp) => {
    expect(errorOf(validateEvent({ ...TRACK, timestamp }))).toBeUndefined();
  });

  it.each([0.5, 1, 1e-9])("accepts probability %s", (probability) => {
    expect(errorOf(validateEvent(layer({ probability })))).toBeUndefined();
  });
});

describe("validateEvent: refusals, one sentence naming the field", () => {
  it.each([
    [null, "an event must be an object, got null"],
    ["track", 'an event must be an object, got "track"'],
    [[TRACK], "an event must be an object, got an array"],
    [42, "an event must be an object, got 42"],
  ])("refuses a non-object event %j", (raw, error) => {
    expect(validateEvent(raw)).toEqual({ error });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["type missing", with_(TRACK, { type: undefined }), "type is required"],
    ["type unknown", with_(TRACK, { type: "click" }), 'type must be one of exposure, track, decision, got "click"'],
    ["type in other case", with_(TRACK, { type: "Track" }), 'type must be one of exposure, track, decision, got "Track"'],
    ["type null", with_(TRACK, { type: null }), "type must be one of exposure, track, decision, got null"],
    ["unitKey missing", with_(TRACK, { unitKey: undefined }), "unitKey is required"],
    ["unitKey empty", with_(EXPOSURE, { unitKey: "" }), 'unitKey must be a non-empty string, got ""'],
    ["unitKey a number", with_(DECISION, { unitKey: 42 }), "unitKey must be a non-empty string, got 42"],
    ["unitKey null", with_(TRACK, { unitKey: null }), "unitKey must be a non-empty string, got null"],
    ["timestamp missing", with_(TRACK, { timestamp: undefined }), "timestamp is required"],
    ["timestamp prose", with_(TRACK, { timestamp: "yesterday" }), 'timestamp must be an ISO 8601 date-time, got "yesterday"'],
    ["timestamp epoch ms", with_(TRACK, { timestamp: 1767225600000 }), "timestamp must be an ISO 8601 date-time, got 1767225600000"],
    ["timestamp Feb 30", with_(TRACK, { timestamp: "2026-02-30T00:00:00Z" }), 'timestamp must be an ISO 8601 date-time, got "2026-02-30T00:00:00Z"'],
    ["timestamp Feb 29 of a common year", with_(TRACK, { timestamp: "2026-02-29T12:00:00Z" }), 'timestamp must be an ISO 8601 date-time, got "2026-02-29T12:00:00Z"'],
    ["timestamp 1900-02-29", with_(TRACK, { timestamp: "1900-02-29T12:00:00Z" }), 'timestamp must be an ISO 8601 date-time, got "1900-02-29T12:00:00Z"'],
    ["timestamp month 13", with_(TRACK, { timestamp: "2026-13-01T00:00:00Z" }), 'timestamp must be an ISO 8601 date-time, got "2026-13-01T00:00:00Z"'],
    ["timestamp hour 24", with_(TRACK, { timestamp: "2026-01-01T24:00:00Z" }), 'timestamp must be an ISO 8601 date-time, got "2026-01-01T24:00:00Z"'],
    ["timestamp without zone", with_(TRACK, { timestamp: "2026-01-01T10:00:00" }), 'timestamp must be an ISO 8601 date-time, got "2026-01-01T10:00:00"'],
    ["timestamp date only", with_(TRACK, { timestamp: "2026-01-01" }), 'timestamp must be an ISO 8601 date-time, got "2026-01-01"'],
    ["timestamp with a space", with_(TRACK, { timestamp: "2026-01-01 10:00:00Z" }), 'timestamp must be an ISO 8601 date-time, got "2026-01-01 10:00:00Z"'],
    ["timestamp compact offset", with_(TRACK, { timestamp: "2026-01-01T10:00:00+0100" }), 'timestamp must be an ISO 8601 date-time, got "2026-01-01T10:00:00+0100"'],
    ["timestamp lowercase z", with_(TRACK, { timestamp: "2026-01-01T10:00:00z" }), 'timestamp must be an ISO 8601 date-time, got "2026-01-01T10:00:00z"'],
    ["timestamp trailing text", with_(TRACK, { timestamp: "2026-01-01T10:00:00Z " }), 'timestamp must be an ISO 8601 date-time, got "2026-01-01T10:00:00Z "'],
  ])("%s", (_, raw, error) => {
    expect(validateEvent(raw)).toEqual({ error });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["exposure without assignments", with_(EXPOSURE, { assignments: undefined }), "assignments is required"],
    ["exposure assignments an array", with_(EXPOSURE, { assignments: [] }), "assignments must be an object, got an array"],
    ["exposure without layers", with_(EXPOSURE, { layers: undefined }), "layers is required"],
    ["exposure layers an object", with_(EXPOSURE, { layers: {} }), "layers must be an array, got an object"],
    ["decision without assignments", with_(DECISION, { assignments: undefined }), "assignments is required"],
    ["decision without layers", with_(DECISION, { layers: undefined }), "layers is required"],
    ["decision latencyMs negative", with_(DECISION, { latencyMs: -1 }), "latencyMs must be a finite number >= 0, got -1"],
    ["decision latencyMs a string", with_(DECISION, { latencyMs: "3" }), 'latencyMs must be a finite number >= 0, got "3"'],
    ["track without event", with_(TRACK, { event: undefined }), "event is required"],
    ["track event empty", with_(TRACK, { event: "" }), 'event must be a non-empty string, got ""'],
    ["track value a string", with_(TRACK, { value: "49.9" }), 'value must be a finite number, got "49.9"'],
    ["track value null", with_(TRACK, { value: null }), "value must be a finite number, got null"],
    ["track values an array", with_(TRACK, { values: [1] }), "values must be an object, got an array"],
    ["track values entry a string", with_(TRACK, { values: { revenue: 1, items: "2" } }), 'values.items must be a finite number, got "2"'],
    ["track values entry null", with_(TRACK, { values: { revenue: null } }), "values.revenue must be a finite number, got null"],
    ["track properties a string", with_(TRACK, { properties: "sku=A-1" }), 'properties must be an object, got "sku=A-1"'],
    ["track properties null", with_(TRACK, { properties: null }), "properties must be an object, got null"],
    ["track attribution an object", with_(TRACK, { attribution: {} }), "attribution must be an array, got an object"],
    ["track attribution item a string", with_(TRACK, { attribution: [{}, "dec_01"] }), 'attribution[1] must be an object, got "dec_01"'],
  ])("%s", (_, raw, error) => {
    expect(validateEvent(raw)).toEqual({ error });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["layer not an object", { layers: [{ layerId: "a", bucket: 1 }, "checkout"] }, 'layers[1] must be an object, got "checkout"'],
    ["layer null", { layers: [null] }, "layers[0] must be an object, got null"],
  ])("%s", (_, patch, error) => {
    expect(validateEvent(with_(EXPOSURE, patch))).toEqual({ error });
  });

  it.each<[Record<string, unknown>, string]>([
    [{ layerId: undefined }, "layers[2].layerId is required"],
    [{ layerId: "" }, 'layers[2].layerId must be a non-empty string, got ""'],
    [{ layerId: 7 }, "layers[2].layerId must be a non-empty string, got 7"],
    [{ bucket: undefined }, "layers[2].bucket is required"],
    [{ bucket: -1 }, "layers[2].bucket must be a non-negative integer, got -1"],
    [{ bucket: 1.5 }, "layers[2].bucket must be a non-negative integer, got 1.5"],
    [{ bucket: "3" }, 'layers[2].bucket must be a non-negative integer, got "3"'],
    [{ bucket: 2 ** 53 }, "layers[2].bucket must be a non-negative integer, got 9007199254740992"],
    [{ policyId: 1 }, "layers[2].policyId must be a string, got 1"],
    [{ policyKey: null }, "layers[2].policyKey must be a string, got null"],
    [{ allocationName: false }, "layers[2].allocationName must be a string, got false"],
    [{ allocationKey: {} }, "layers[2].allocationKey must be a string, got an object"],
    [{ probability: 0 }, "layers[2].probability must be a number in (0, 1], got 0"],
    [{ probability: -0.1 }, "layers[2].probability must be a number in (0, 1], got -0.1"],
    [{ probability: 1.0001 }, "layers[2].probability must be a number in (0, 1], got 1.0001"],
    [{ probability: "0.5" }, 'layers[2].probability must be a number in (0, 1], got "0.5"'],
  ])("layer field %j", (patch, error) => {
    expect(validateEvent(layer(patch))).toEqual({ error });
  });

  it.each([
    ["decisionId", "", 'decisionId must be a non-empty string, got ""'],
    ["projectId", "", 'projectId must be a non-empty string, got ""'],
    ["env", 3, "env must be a non-empty string, got 3"],
    ["configVersion", 1, "configVersion must be a string, got 1"],
    ["userId", 42, "userId must be a string, got 42"],
    ["sessionId", null, "sessionId must be a string, got null"],
    ["sdkName", ["js"], "sdkName must be a string, got an array"],
    ["sdkVersion", 1.2, "sdkVersion must be a string, got 1.2"],
  ])("common optional field %s = %j, on every type", (key, value, error) => {
    for (const base of [EXPOSURE, TRACK, DECISION]) {
      expect(validateEvent(with_(base, { [key]: value }))).toEqual({ error });
    }
  });

  it("allows empty strings in descriptive fields", () => {
    expect(errorOf(validateEvent(with_(TRACK, { userId: "", sessionId: "", sdkName: "", sdkVersion: "", configVersion: "" })))).toBeUndefined();
  });

  it("does not check fields the event's type does not have (they are kept as unknown fields)", () => {
    expect(errorOf(validateEvent(with_(TRACK, { layers: "none", latencyMs: -5 })))).toBeUndefined();
    expect(errorOf(validateEvent(with_(EXPOSURE, { event: 5, value: "x", latencyMs: -5 })))).toBeUndefined();
  });

  it("reports only the first problem, in order: type, unitKey, timestamp, type fields, common fields", () => {
    const raw = { type: "track", unitKey: "", timestamp: "nope", value: "x", sdkName: 1 };
    expect(validateEvent(raw)).toEqual({ error: 'unitKey must be a non-empty string, got ""' });
    expect(validateEvent({ ...raw, unitKey: "u" })).toEqual({ error: 'timestamp must be an ISO 8601 date-time, got "nope"' });
    expect(validateEvent({ ...raw, unitKey: "u", timestamp: "2026-01-01T00:00:00Z" })).toEqual({ error: "event is required" });
    expect(validateEvent({ ...raw, unitKey: "u", timestamp: "2026-01-01T00:00:00Z", event: "e" })).toEqual({ error: 'value must be a finite number, got "x"' });
  });

  it("shortens long values in messages", () => {
    const result = validateEvent(with_(TRACK, { timestamp: "x".repeat(500) }));
    expect(errorOf(result)!.length).toBeLessThan(100);
  });

  it("treats a `__proto__` key of a parsed body as an unknown field, not as the prototype", () => {
    const raw = JSON.parse('{"type":"track","unitKey":"u","timestamp":"2026-01-01T00:00:00Z","event":"e","__proto__":{"value":"x"}}') as unknown;
    expect(errorOf(validateEvent(raw))).toBeUndefined();
  });
});
