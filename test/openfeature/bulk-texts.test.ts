// OFREP's bulk answer written from per-version fragments (src/server/ofrep/bulk-texts.ts) against
// the straightforward objects it replaces, over random bundles, values and contexts: the answer's
// JSON as evaluation(key, FlagIndex.details(…)) serializes the evaluations with the decision id,
// and ETags equal exactly when the evaluations' JSON without the decision id is.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { compileBundle } from "../../src/bundle/compile.js";
import { FlagIndex } from "../../src/bundle/openfeature.js";
import { resolve } from "../../src/bundle/resolve.js";
import type { Bundle, JsonValue } from "../../src/bundle/types.js";
import { type Engine, loadEngine } from "../../src/index.js";
import { evaluation } from "../../src/server/ofrep/answers.js";
import { BulkTexts } from "../../src/server/ofrep/bulk-texts.js";
import { arbitraryBundle } from "../bundle/bundles.js";

const NOW = Date.parse("2026-11-21T12:00:00Z");

/** Random bundles whose parameters are JSON values (defaults and overrides), some shared between allocations. */
const bundles = fc.tuple(arbitraryBundle, fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 1, maxLength: 6 }), fc.string({ maxLength: 6 })).map(([bundle, values, name]): Bundle => {
  const value = (i: number) => values[i % values.length] as JsonValue;
  bundle.parameters = bundle.parameters.map((p, i) => ({ ...p, key: `${p.key}.${name}"`, type: "json", default: value(i) }));
  const keys = new Map(bundle.parameters.map((p) => [p.layerId, p.key]));
  let n = 0;
  for (const layer of bundle.layers) {
    for (const policy of layer.policies) {
      for (const allocation of policy.allocations) allocation.overrides = { [keys.get(layer.id)!]: value(n++) };
    }
  }
  return bundle;
});

/** Few users and accounts, so that contexts often resolve alike (equal ETags) and often do not. */
const contexts = fc.record(
  { userId: fc.constantFrom("u1", "u2", "u3", "u4"), accountId: fc.constantFrom("a1", "a2"), country: fc.constantFrom("NL", "DE") },
  { requiredKeys: [] },
);

describe("OFREP bulk texts", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine();
  });

  it("equal the JSON of the evaluations with the decision id, and give equal ETags exactly when the evaluations without it are equal", () => {
    let equal = 0;
    let unequal = 0;
    fc.assert(
      fc.property(bundles, fc.array(contexts, { minLength: 2, maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), (bundle, asked, extra) => {
        const compiled = compileBundle(bundle, engine);
        const index = new FlagIndex(bundle);
        const texts = new BulkTexts(index);
        const stream = JSON.stringify({ type: "sse", extra });
        const seen: { etag: string; evaluations: string }[] = [];
        for (const context of asked) {
          const resolution = resolve(compiled, context, { now: NOW });
          const decisionId = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
          // The text with and without its outcome asked first, as a 200 and as a caller that needs no ETag.
          const etag = texts.etag(resolution);
          const written = texts.text(resolution, decisionId, stream);
          expect(texts.text(resolve(compiled, context, { now: NOW }), decisionId, stream)).toBe(written);
          const flags = index.flagKeys.map((key) => evaluation(key, index.details(key, resolution)!));
          const evaluations = JSON.stringify(flags);
          for (const earlier of seen) {
            expect(etag === earlier.etag).toBe(evaluations === earlier.evaluations);
            if (evaluations === earlier.evaluations) equal++;
            else unequal++;
          }
          seen.push({ etag, evaluations });
          for (const flag of flags) flag.metadata.decisionId = decisionId;
          const metadata = { configVersion: bundle.version, decisionId };
          expect(written).toBe(JSON.stringify({ flags, metadata, eventStreams: [{ type: "sse", extra }] }));
        }
      }),
      { numRuns: 300 },
    );
    // Both cases were met often enough for the equivalence to mean something.
    expect(equal).toBeGreaterThan(50);
    expect(unequal).toBeGreaterThan(50);
  });
});
