// What the getters' memo keeps (src/bundle/layer-outcomes.ts): a layer's outcome is decided once
// per unit while the fields its conditions read and the schedule window around it hold, whatever
// object carries the context, and again when either moves. Counted by the conditions evaluated.
import { beforeAll, describe, expect, it } from "vitest";
import { LayerMemo } from "../../src/bundle/layer-outcomes.js";
import { type Engine, compileBundle, loadEngine } from "../../src/index.js";
import { allocation, sampleBundle, staticPolicy } from "./bundles.js";

const NOW = Date.parse("2026-11-21T12:00:00Z");
const MINUTE = 60_000;

describe("a layer's outcome kept per unit", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine();
  });

  function counted() {
    const bundle = sampleBundle();
    bundle.parameters = [{ key: "p", type: "integer", default: -1, layerId: "l", namespace: "n" }];
    const until = new Date(NOW + MINUTE).toISOString();
    bundle.layers = [{ id: "l", policies: [staticPolicy("gold", [allocation("all", [0, 999], { p: 1 })], { conditions: [{ plan: "gold" }], endAt: until })] }];
    const compiled = compileBundle(bundle, engine);
    const policy = compiled.layers[0]!.policies[0]! as { matches: (context: Record<string, unknown>) => boolean };
    const matches = policy.matches;
    const evaluated = { count: 0 };
    policy.matches = (context) => (evaluated.count++, matches(context));
    return { compiled, layer: compiled.layers[0]!, evaluated };
  }

  it("is decided once for equal values in any object, again when a field read changes or a schedule bound passes", () => {
    const { compiled, layer, evaluated } = counted();
    const memo = new LayerMemo();
    const read = (context: Record<string, unknown>, now = NOW) => memo.outcome(compiled, layer, context, "u", now).value("p", -1);
    expect(read({ userId: "u", plan: "gold", country: "NL" })).toBe(1);
    expect(read({ userId: "u", plan: "gold", country: "DE" })).toBe(1); // a field no condition reads
    expect(read({ plan: "gold" }, NOW + MINUTE / 2)).toBe(1);
    expect(evaluated.count).toBe(1);
    expect(read({ plan: "free" })).toBe(-1);
    expect(read({ plan: "gold" })).toBe(1);
    expect(evaluated.count).toBe(3);
    expect(read({ plan: "gold" }, NOW + MINUTE)).toBe(-1); // the policy's window closed: not even its conditions are read
  });

  it("is decided on every read while a field read holds an array (it could change inside)", () => {
    const { compiled, layer, evaluated } = counted();
    const memo = new LayerMemo();
    const context = { plan: ["gold"] };
    memo.outcome(compiled, layer, context, "u", NOW);
    memo.outcome(compiled, layer, context, "u", NOW);
    expect(evaluated.count).toBe(2);
  });
});
