// OFREP's bulk answer written from per-version fragments (src/server/ofrep/bulk-texts.ts) against
// the straightforward objects it replaces, over random bundles, values and contexts: the
// evaluations' JSON as evaluation(key, FlagIndex.details(…)) serializes them, without and with the
// decision id, and the ETag bulkEtag hashes from them.
import { createHash } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { compileBundle } from "../../src/bundle/compile.js";
import { FlagIndex } from "../../src/bundle/openfeature.js";
import { resolve } from "../../src/bundle/resolve.js";
import type { Bundle, JsonValue } from "../../src/bundle/types.js";
import { type Engine, loadEngine } from "../../src/index.js";
import { bulkEtag, bulkEtagOf, evaluation } from "../../src/server/ofrep/answers.js";
import { BulkTexts } from "../../src/server/ofrep/bulk-texts.js";
import { arbitraryBundle } from "../bundle/bundles.js";

const NOW = Date.parse("2026-11-21T12:00:00Z");
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest();

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

const contexts = fc.record({ userId: fc.string(), accountId: fc.string(), country: fc.constantFrom("NL", "DE") }, { requiredKeys: [] });

describe("OFREP bulk texts", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine();
  });

  it("equal the JSON of the evaluations, with and without the decision id, and give the same ETag", () => {
    fc.assert(
      fc.property(bundles, fc.array(contexts, { minLength: 1, maxLength: 4 }), (bundle, asked) => {
        const compiled = compileBundle(bundle, engine);
        const index = new FlagIndex(bundle);
        const texts = new BulkTexts(index);
        for (const context of asked) {
          const resolution = resolve(compiled, context, { now: NOW });
          const decisionId = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
          const written = texts.evaluations(resolution, decisionId);
          const flags = index.flagKeys.map((key) => evaluation(key, index.details(key, resolution)!));
          expect(written.unsigned).toBe(JSON.stringify(flags));
          expect(bulkEtagOf(written.unsigned, sha256)).toBe(bulkEtag(flags, sha256));
          for (const flag of flags) flag.metadata.decisionId = decisionId;
          expect(written.signed).toBe(JSON.stringify(flags));
        }
      }),
      { numRuns: 300 },
    );
  });
});
