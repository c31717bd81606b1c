// The texts a resolution writes straight from itself (resolve-texts.ts) against the straightforward
// JSON.stringify of the objects they replace, over random bundles, contexts and tenants: the
// decision event's log row as encodeLogRow writes the event the store is handed, that event's
// layers as the contract's LayerAssignment, and /v1/resolve's answer as resolveResponse's body.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { compileBundle } from "../../src/bundle/compile.js";
import { type Resolution, resolve } from "../../src/bundle/resolve.js";
import { layerAssignment, resolveResponse } from "../../src/bundle/response.js";
import type { Bundle } from "../../src/bundle/types.js";
import { type Engine, loadEngine } from "../../src/index.js";
import { decisionEvent } from "../../src/server/decision-event.js";
import { VersionTexts, sharedParts } from "../../src/server/resolve-texts.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import { arbitraryBundle } from "../bundle/bundles.js";
import { contexts, text } from "./text-arbitraries.js";

const NOW = Date.parse("2026-11-21T12:00:00Z");

/** A random bundle whose names, version and tenant need escaping, and whose adaptive policies log context fields. */
const bundles = fc.tuple(arbitraryBundle, fc.integer({ min: 0, max: 4e12 }), text, text, text, fc.boolean()).map(([bundle, version, org, name, env, logs]): Bundle => {
  bundle.version = new Date(version).toISOString();
  bundle.orgId = `o${org}`;
  bundle.env = `e${env}`;
  for (const layer of bundle.layers) {
    for (const policy of layer.policies) {
      for (const allocation of policy.allocations) allocation.name = `${allocation.id} ${name}`;
      if (logs && policy.kind !== "static") policy.logContextFields = ["country", "plan", "missing"];
    }
  }
  return bundle;
});

describe("texts written straight from a resolution", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine();
  });

  it("equal JSON.stringify of the decision event's row and of the resolve answer", () => {
    fc.assert(
      fc.property(bundles, contexts, fc.option(fc.array(fc.constantFrom("p0", "p1", "p2", "p3", "nope"), { maxLength: 3 })), fc.double({ min: 0, max: 50, noNaN: true }), fc.boolean(), (bundle, context, parameters, latencyMs, ownTenant) => {
        const compiled = compileBundle(bundle, engine);
        const resolution = resolve(compiled, context, { parameters: parameters ?? undefined, now: NOW });
        const texts = new VersionTexts(bundle);
        const timestamp = new Date(NOW).toISOString();
        const decisionId = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
        // A source whose tenant is the bundle's own (the usual case), or another one.
        const tenant = ownTenant ? { orgId: bundle.orgId, projectId: bundle.projectId, env: bundle.env, configVersion: bundle.version } : { orgId: "o2", projectId: "p\"2", env: "staging", configVersion: "2026-11-20T00:00:00.000Z" };
        const source = { decisionId, ...tenant, nowMs: NOW, timestamp, latencyMs };
        const unit = resolution.unitKeyValue ?? "";
        const event = decisionEvent(resolution, source, unit);
        const parts = sharedParts(resolution);

        expect(texts.decisionRow(resolution, source, unit, event.id, parts).text).toBe(encodeLogRow([event]).text);
        // As the log writer's ring takes it (its version's pieces copied from their bytes), with the version's kept assignments.
        const ring = Buffer.alloc(3 * encodeLogRow([event]).text.length + 16);
        const row = texts.decisionRow(resolution, source, unit, event.id, texts.sharedParts(resolution, parameters === null));
        expect(ring.toString("utf8", 0, row.writeUtf8(ring, 0))).toBe(encodeLogRow([event]).text);
        expect(JSON.stringify(event.body.layers)).toBe(JSON.stringify(resolution.layers.map(assignedLayer)));
        const ids = { decisionId, timestamp, version: tenant.configVersion };
        expect(texts.resolveAnswer(resolution, decisionId, timestamp, tenant.configVersion, parts)).toBe(JSON.stringify(resolveResponse(resolution, ids)));
      }),
      { numRuns: 500 },
    );
  });

  it("keep the assignments' JSON per combination of allocations, equal to JSON.stringify of each resolution's assignments, for many contexts of one version, past its bound too", () => {
    fc.assert(
      fc.property(bundles, fc.array(contexts, { minLength: 20, maxLength: 60 }), fc.option(fc.array(fc.constantFrom("p0", "p1", "p2", "nope"), { maxLength: 2 })), fc.integer({ min: 0, max: 6 }), (bundle, asked, parameters, bound) => {
        const compiled = compileBundle(bundle, engine);
        const kept = new VersionTexts(bundle);
        const bounded = new VersionTexts(bundle, bound);
        // Twice over: the second pass reads what the first kept.
        for (const context of [...asked, ...asked]) {
          const resolution = resolve(compiled, context, { parameters: parameters ?? undefined, now: NOW });
          const all = parameters === null;
          const expected = sharedParts(resolution);
          for (const parts of [kept.sharedParts(resolution, all), bounded.sharedParts(resolution, all)]) {
            expect({ assignments: parts.assignments, filteredContext: parts.filteredContext }).toEqual(expected);
            // A kept combination's bytes are its text's.
            if (parts.encodedAssignments !== undefined) expect(Buffer.from(parts.encodedAssignments.bytes).toString()).toBe(expected.assignments);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

/** The layer as decision events held it before they shared the resolution's: LayerAssignment, then attributionOnly. */
function assignedLayer(layer: Resolution["layers"][number]): Record<string, unknown> {
  const assigned = layerAssignment(layer);
  assigned.attributionOnly = layer.attributionOnly;
  return assigned;
}
