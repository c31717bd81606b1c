// The texts a decision of POST /v1/decide writes straight from itself (decide-texts.ts) against the
// JSON.stringify of the objects they replace, over random bundles, contexts and tenants: the
// decision events' log row as encodeLogRow writes the events the store is handed, and the answer
// (one decision, and a batch with refused items) as the object the route built before.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type Decision, decide } from "../../src/adaptive/decide.js";
import { EntityArms } from "../../src/adaptive/entity-memory.js";
import { adaptiveCatalog } from "../../src/adaptive/policy.js";
import { PolicyState } from "../../src/adaptive/state.js";
import { compileBundle } from "../../src/bundle/compile.js";
import type { Bundle } from "../../src/bundle/types.js";
import { type Engine, loadEngine } from "../../src/index.js";
import { type Decided, batchAnswer, decideAnswer, decisionParts, decisionRow } from "../../src/server/decide-texts.js";
import { VersionTexts } from "../../src/server/resolve-texts.js";
import { type EventSource, decideEvent } from "../../src/server/routes/decide.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import { arbitraryBundle } from "../bundle/bundles.js";
import { contexts, text } from "./text-arbitraries.js";

const NOW = Date.parse("2026-11-21T12:00:00Z");

/** A random bundle whose names, keys, version and tenant need escaping; its adaptive policies log context fields, are contextual or per entity. */
const bundles = fc.tuple(arbitraryBundle, fc.integer({ min: 0, max: 4e12 }), text, text, text, fc.boolean(), fc.boolean(), fc.boolean()).map(([bundle, version, org, name, env, logs, contextual, perEntity]): Bundle => {
  bundle.version = new Date(version).toISOString();
  bundle.orgId = `o${org}`;
  bundle.env = `e${env}`;
  for (const layer of bundle.layers) {
    for (const policy of layer.policies) {
      policy.key = `${policy.key} ${name}`;
      for (const allocation of policy.allocations) {
        allocation.name = `${allocation.id} ${name}`;
        allocation.key = `${allocation.key}${name}`;
      }
      if (policy.kind === "static") continue;
      if (logs) policy.logContextFields = ["country", "plan", "missing"];
      if (contextual) {
        policy.kind = "contextual";
        policy.params = { features: [{ name: "country", type: "categorical", values: ["NL", "DE"] }] };
      }
      if (perEntity) policy.entityKey = "accountId";
    }
  }
  return bundle;
});

describe("texts written straight from a decision", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine();
  });

  it("equal JSON.stringify of the decision events' row, of one decision's answer and of a batch's", () => {
    let decisions = 0;
    fc.assert(
      fc.property(bundles, fc.array(contexts, { minLength: 1, maxLength: 4 }), fc.option(text), fc.double({ min: 0, max: 50, noNaN: true }), fc.boolean(), fc.nat(5), (bundle, items, entityId, latencyMs, ownTenant, revision) => {
        const compiled = compileBundle(bundle, engine);
        const policies = [...adaptiveCatalog(compiled).values()];
        fc.pre(policies.length > 0);
        const timestamp = new Date(NOW).toISOString();
        const tenant = ownTenant ? { orgId: bundle.orgId, projectId: bundle.projectId, env: bundle.env } : { orgId: "o2", projectId: 'p"2', env: "staging" };
        const source: EventSource = { ...tenant, version: bundle.version, now: NOW, timestamp, latencyMs };
        const outcomes: (Decided | { error: { code: string; message: string } })[] = [];
        items.forEach((context, i) => {
          const state = new PolicyState();
          state.version = revision;
          const input = { context, entityId: entityId ?? undefined, now: NOW };
          const first = decide(compiled, policies[i % policies.length]!, state, input);
          // An entity new to this state: decided from empty statistics, as the store would give them.
          const outcome = "unloaded" in first ? decide(compiled, policies[i % policies.length]!, state, { ...input, loaded: new Map([[first.unloaded, new EntityArms()]]) }) : first;
          if ("unloaded" in outcome) throw new Error("decided unloaded twice");
          outcomes.push("problem" in outcome ? { error: { code: "BAD_REQUEST", message: outcome.problem } } : { decision: outcome.decision, decisionId: `0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5${i}` });
        });
        const decided = outcomes.filter((o): o is Decided => "decision" in o);
        decisions += decided.length;
        const parts = decided.map((o) => decisionParts(o.decision));
        const events = decided.map((o) => decideEvent(o.decision, o.decisionId, source));

        if (decided.length > 0) {
          expect(decisionRow(new VersionTexts(bundle), decided, parts, events.map((e) => e.id), source).text).toBe(encodeLogRow(events).text);
          expect(decideAnswer(decided[0]!, parts[0]!, bundle.version, timestamp)).toBe(JSON.stringify(responseBody(decided[0]!.decision, decided[0]!.decisionId, bundle.version, NOW)));
        }
        const results = outcomes.map((o) => ("decision" in o ? responseBody(o.decision, o.decisionId, bundle.version, NOW) : o));
        expect(batchAnswer(outcomes, parts, bundle.version, timestamp)).toBe(JSON.stringify({ results }));
      }),
      { numRuns: 300 },
    );
    expect(decisions).toBeGreaterThan(300);
  });
});

/** POST /v1/decide's answer as the route built it before decide-texts.ts. */
function responseBody(decision: Decision, decisionId: string, version: string, now: number) {
  const { policy } = decision;
  const allocation = policy.compiled.allocations[decision.arm]!;
  return {
    decisionId,
    policyId: policy.id,
    policyKey: policy.key,
    layerId: policy.layer.id,
    allocationId: allocation.id,
    allocationKey: allocation.key,
    allocationName: allocation.name,
    assignments: decision.assignments,
    probability: decision.probability,
    stateVersion: `${version}#${decision.stateRevision}`,
    metadata: {
      timestamp: new Date(now).toISOString(),
      unitKeyValue: decision.unit,
      entityId: decision.entityId,
      bucket: decision.bucket,
      algorithm: decision.algorithm,
      filteredContext: decision.filteredContext,
    },
  };
}
