// prepareBatch builds each stored event from the parsed event itself (no copy of its body), writes
// eventTime without Date where it can, and builds the log row as it goes. Held here to what the
// plain way gives: a copy of the body with the server's fields set, eventTime through Date, and
// encodeLogRow of the stored events.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type BatchSource, prepareBatch } from "../../src/server/event-batch.js";
import { compileEventCatalog } from "../../src/server/events/schemas.js";
import { DEFAULT_MAX_EVENT_AGE_MS, eventTimeMs } from "../../src/store/event-time.js";
import { LOG_FORMAT_COMPACT, encodeLogRow } from "../../src/store/log-row.js";
import type { KeyRecord } from "../../src/store/types.js";

const NOW = Date.parse("2026-11-27T18:00:00.000Z");
const HOUR = 3_600_000;
const catalog = compileEventCatalog([
  { name: "purchase", schemaEnforcement: "reject", propertySchema: { type: "object", required: ["sku"] } },
  { name: "signup", schemaEnforcement: "warn", propertySchema: { type: "object", properties: { plan: { enum: ["free", "pro"] } } } },
]);

function source(overrides: Partial<BatchSource> = {}): BatchSource {
  let next = 0;
  return {
    key: { orgId: "org-1", projectId: undefined } as unknown as KeyRecord,
    checkDepth: false,
    checkUnstorable: false,
    projectHeader: "proj-h",
    defaultEnv: "production",
    receivedAt: new Date(NOW).toISOString(),
    receivedAtMs: NOW,
    sentAtMs: undefined,
    maxEventAgeMs: DEFAULT_MAX_EVENT_AGE_MS,
    owns: (projectId) => projectId !== "not-ours",
    catalog: () => catalog,
    newId: () => `id-${next++}`,
    ...overrides,
  };
}

/** Times in every form the contract takes, near the receipt and far from it. */
const timestamp = fc
  .tuple(fc.integer({ min: -10 * 24 * HOUR, max: 10 * 24 * HOUR }), fc.constantFrom("iso", "seconds", "minutes", "offset", "micros"))
  .map(([offset, form]) => {
    const iso = new Date(NOW + offset).toISOString();
    if (form === "seconds") return `${iso.slice(0, 19)}Z`;
    if (form === "minutes") return `${iso.slice(0, 16)}Z`;
    if (form === "offset") return `${iso.slice(0, 23)}+02:00`;
    if (form === "micros") return `${iso.slice(0, 23)}456Z`;
    return iso;
  });

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const word = fc.string({ minLength: 1, maxLength: 6 });

const rawEvent = fc
  .record({
    type: fc.constantFrom("track", "exposure", "decision"),
    unitKey: word,
    timestamp,
    event: fc.constantFrom("purchase", "signup", "unknown-name"),
    properties: optional(fc.constantFrom({ sku: "a" }, { plan: "free" }, { plan: "gold" }, {})),
    id: optional(word),
    decisionId: optional(word),
    projectId: optional(fc.constantFrom("proj-1", "proj-2", "not-ours")),
    env: optional(fc.constantFrom("staging", "production")),
    // Fields the server sets, sent by the client anyway: overwritten where they stand.
    orgId: optional(word),
    eventTime: optional(word),
    extra: fc.dictionary(fc.string({ maxLength: 4 }).map((k) => `x${k}`), fc.jsonValue(), { maxKeys: 3 }),
  })
  .map(({ extra, type, event, properties, ...fields }) => {
    const raw: Record<string, unknown> = { ...fields, ...extra, type };
    if (type === "track") Object.assign(raw, { event }, properties && { properties });
    else Object.assign(raw, { assignments: {}, layers: [] });
    for (const key of Object.keys(raw)) if (raw[key] === undefined) delete raw[key];
    return raw;
  });

/** What the server stored before: a copy of the body with its fields set, eventTime through Date. */
function plainBody(raw: Record<string, unknown>, from: BatchSource): Record<string, unknown> {
  const ms = eventTimeMs(Date.parse(raw.timestamp as string), from.receivedAtMs, from.sentAtMs, from.maxEventAgeMs);
  return { ...raw, orgId: "org-1", projectId: raw.projectId ?? "proj-h", env: raw.env ?? "production", eventTime: new Date(ms).toISOString() };
}

describe("prepareBatch", () => {
  it("stores each event's own body with the server's fields, eventTime as Date gives it, and the row encodeLogRow gives", async () => {
    const sentAt = optional(fc.integer({ min: NOW - 5 * HOUR, max: NOW + 5 * HOUR }));
    await fc.assert(
      fc.asyncProperty(fc.array(rawEvent, { maxLength: 8 }), sentAt, async (raws, sentAtMs) => {
        const from = source({ sentAtMs });
        const expected = raws.map((raw) => JSON.stringify(plainBody(raw, from)));
        const batch = await prepareBatch(JSON.parse(JSON.stringify(raws)) as unknown[], from);
        const refused = new Set(batch.validationErrors.map((e) => e.index));
        expect(batch.events.map((e) => JSON.stringify(e.body))).toEqual(expected.filter((_, i) => !refused.has(i)));
        if (batch.events.length === 0) return;
        const row = encodeLogRow(batch.events);
        expect(row.format).toBe(LOG_FORMAT_COMPACT);
        expect(batch.row.format).toBe(LOG_FORMAT_COMPACT);
        expect(batch.row.text).toBe(row.text);
      }),
      { numRuns: 1_000 },
    );
  });

  it("keeps a `__proto__` field as sent, as it keeps any field the contract does not name", async () => {
    const raw = JSON.parse('[{"type":"track","unitKey":"u","timestamp":"2026-11-27T17:00:00.000Z","event":"e","__proto__":{"value":"x"}}]') as unknown[];
    const batch = await prepareBatch(raw, source());
    const [, [, body]] = JSON.parse(batch.row.text) as [string, [string, Record<string, unknown>]];
    expect(Object.hasOwn(body, "__proto__")).toBe(true);
    expect(body.__proto__).toEqual({ value: "x" });
    expect(Object.hasOwn(batch.events[0]!.body, "__proto__")).toBe(true);
  });

  it("asks once a batch whether a project is the key's and for its catalog, and judges every event the same", async () => {
    const asked = { owns: 0, catalog: 0 };
    const from = source({
      owns: (projectId) => (asked.owns++, projectId !== "not-ours"),
      catalog: () => (asked.catalog++, catalog),
    });
    const track = (projectId: string, event: string) => ({ type: "track", unitKey: "u", timestamp: "2026-11-27T17:00:00.000Z", event, projectId });
    const uniform = await prepareBatch(Array.from({ length: 10 }, (_, i) => track("proj-1", i % 2 ? "purchase" : "signup")), from);
    expect(uniform.events).toHaveLength(5);
    expect(uniform.validationErrors.map((e) => e.index)).toEqual([1, 3, 5, 7, 9]); // purchase without its required sku
    expect(asked).toEqual({ owns: 1, catalog: 1 });
    const mixed = await prepareBatch([track("proj-1", "a"), track("not-ours", "a"), track("proj-1", "a"), track("proj-2", "a")], from);
    expect(mixed.validationErrors).toEqual([
      { index: 1, error: 'projectId "not-ours" is not a project of this key\'s organization' },
    ]);
    expect(mixed.events.map((e) => e.projectId)).toEqual(["proj-1", "proj-1", "proj-2"]);
  });
});
