// The getters keep each layer's outcome per unit and the context fields its conditions read
// (src/bundle/layer-outcomes.ts). Whatever they keep, a getter must answer and expose exactly
// what a resolution of that parameter alone does, and its value must be the full resolve's: on
// random bundles with schedule windows, for contexts changed in place between reads (a memo
// keyed on the object would serve a stale value), with fields that hold arrays, and over time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Bundle, JsonValue } from "../../src/bundle/types.js";
import { allocation, arbitraryBundle, sampleBundle, staticPolicy } from "../bundle/bundles.js";
import { recorder } from "./helpers.js";

const T0 = Date.parse("2026-11-21T12:00:00Z");
const MINUTE = 60_000;
/** A JSON default takes a value of any type: what the getter answers is what it resolved. */
const FALLBACK = { callers: "default" };
const IN_PLACE = Symbol("change the array inside");

/** Random bundles whose policies sometimes run only in a window of minutes around T0. */
const scheduledBundle = fc
  .tuple(arbitraryBundle, fc.array(fc.tuple(fc.integer({ min: -3, max: 3 }), fc.integer({ min: 1, max: 4 })), { minLength: 12, maxLength: 12 }))
  .map(([bundle, windows]): Bundle => {
    let i = 0;
    for (const layer of bundle.layers) {
      for (const policy of layer.policies) {
        const [start, length] = windows[i++]!;
        if (start === 0) continue;
        policy.startAt = new Date(T0 + start * MINUTE).toISOString();
        policy.endAt = new Date(T0 + (start + length) * MINUTE).toISOString();
      }
    }
    return bundle;
  });

/** A read: which context, a change to it made in place first, which parameter, how much time passed. */
const read = fc.record({
  user: fc.constantFrom(0, 0, 1, 2),
  change: fc.option(
    fc.oneof(
      fc.record({ field: fc.constantFrom("country", "plan", "appVersion"), value: fc.constantFrom<unknown>("NL", "DE", "gold", "silver", "2.0.0", "1.9.0", ["gold"], null, 7) }),
      // A unit of another type stays a unit (a number hashes as its text); a missing one skips its layer.
      fc.record({ field: fc.constant("accountId"), value: fc.constantFrom<unknown>("acct-2", 7, null) }),
      // The array a field holds, changed inside: the same object, another audience.
      fc.record({ field: fc.constant("plan"), value: fc.constantFrom<unknown>(IN_PLACE, IN_PLACE, ["gold"]) }),
    ),
  ),
  parameter: fc.nat(),
  minutes: fc.integer({ min: 0, max: 2 }),
});


/** An event as two sessions can agree on it: without its own, its session's and its decision's ids. */
const comparable = ({ sessionId: _s, decisionId: _d, id: _i, ...rest }: Record<string, unknown>) => rest;

describe("a flag getter", () => {
  it("answers and exposes what a resolution of its parameter alone does, and the full resolve's value, as contexts change in place and time passes", async () => {
    await fc.assert(
      fc.asyncProperty(scheduledBundle, fc.array(read, { minLength: 1, maxLength: 40 }), async (bundle, reads) => {
        const clock = { now: T0 - 4 * MINUTE };
        const [getters, alone, full] = [await recorder(bundle, () => clock.now), await recorder(bundle, () => clock.now), await recorder(bundle, () => clock.now)];
        const contexts: Record<string, unknown>[] = [0, 1, 2].map((u) => ({ userId: u === 2 ? 2 : `user-${u}`, accountId: `acct-${u % 2}`, country: "NL", plan: "gold", appVersion: "2.1.0" }));
        const keys = [...bundle.parameters.map((p) => p.key), "no-such-parameter"];
        for (const { user, change, parameter, minutes } of reads) {
          const context = contexts[user]!;
          if (change?.value === IN_PLACE) {
            const plans = context.plan;
            if (Array.isArray(plans)) plans[0] = plans[0] === "gold" ? "free" : "gold";
          } else if (change !== null) context[change.field] = structuredClone(change.value);
          clock.now += minutes * MINUTE;
          const key = keys[parameter % keys.length]!;
          const value = getters.client.getJSON<JsonValue>(key, FALLBACK, context);
          expect(value).toEqual(alone.client.resolveLocal(context, [key]).assignments[key] ?? FALLBACK);
          expect(value).toEqual(full.client.resolveLocal(context).assignments[key] ?? FALLBACK);
        }
        await Promise.all([getters.client.close(), alone.client.close(), full.client.close()]);
        expect(getters.events.map(comparable)).toEqual(alone.events.map(comparable));
      }),
      { numRuns: 150 },
    );
  });

  it("decides afresh when a field its layer's conditions read changes, in place or inside an array it holds", async () => {
    const clock = { now: T0 };
    const bundle = sampleBundle();
    bundle.parameters = [{ key: "p", type: "integer", default: -1, layerId: "l", namespace: "n" }];
    bundle.layers = [{ id: "l", policies: [staticPolicy("gold", [allocation("all", [0, 999], { p: 1 })], { conditions: [{ plan: { $in: ["gold"] } }] })] }];
    const { client, events } = await recorder(bundle, () => clock.now);
    const context: Record<string, unknown> = { userId: "u", plan: "gold" };
    expect(client.getNumber("p", 0, context)).toBe(1);
    context.plan = "free";
    expect(client.getNumber("p", 0, context)).toBe(-1);
    context.plan = ["gold"];
    expect(client.getNumber("p", 0, context)).toBe(1);
    (context.plan as string[])[0] = "free";
    expect(client.getNumber("p", 0, context)).toBe(-1);
    context.plan = "gold";
    expect(client.getNumber("p", 0, { ...context })).toBe(1);
    await client.close();
    expect(events.map((e) => e.assignments)).toEqual([{ p: 1 }]); // one exposure per unit and allocation
  });
});
