import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileCondition, conditionFields, evalCondition, type SavedGroups } from "../../src/bundle/conditions.js";
import { compareVersion, padVersion } from "../../src/bundle/versions.js";

type Row = [name: string, condition: unknown, attributes: Record<string, unknown>, expected: boolean, savedGroups?: SavedGroups];

const cases = JSON.parse(readFileSync(new URL("../fixtures/growthbook-cases.json", import.meta.url), "utf8")) as { evalCondition: Row[] };
const rows = cases.evalCondition.map(([name, condition, attributes, expected, savedGroups], index) => ({
  index,
  name,
  condition,
  attributes,
  expected,
  savedGroups,
}));

/** Fixture rows that cannot apply to Vane, by row name, with the reason. Deliberately empty. */
const SKIPPED: ReadonlyMap<string, string> = new Map<string, string>([]);

describe("GrowthBook evalCondition cases", () => {
  it("has the fixture's rows and a small, accurate skip list", () => {
    expect(rows.length).toBeGreaterThanOrEqual(240);
    expect(SKIPPED.size).toBeLessThanOrEqual(3);
    for (const name of SKIPPED.keys()) expect(rows.some((row) => row.name === name)).toBe(true);
  });

  const applicable = rows.filter((row) => !SKIPPED.has(row.name));

  it.each(applicable)("#$index $name", ({ condition, attributes, expected, savedGroups }) => {
    expect(evalCondition(attributes, condition, savedGroups)).toBe(expected);

    // One compiled predicate, reused across calls and contexts, gives the same answer every time.
    const predicate = compileCondition(condition, savedGroups);
    expect(predicate(attributes)).toBe(expected);
    predicate({});
    predicate({ unrelated: [1, "two", null] });
    expect(predicate(structuredClone(attributes))).toBe(expected);
    expect(predicate(attributes)).toBe(expected);
  });
});

describe("compile once", () => {
  it("a bad regex makes the condition false without throwing, at compile time or evaluation", () => {
    const predicate = compileCondition({ name: { $regex: "(unclosed" } });
    expect(predicate({ name: "(unclosed" })).toBe(false);
    expect(predicate({})).toBe(false);
  });

  it("an unknown operator makes the whole condition false, even under $not or $nor", () => {
    expect(evalCondition({ name: "x" }, { name: { $regx: "x" } })).toBe(false);
    expect(evalCondition({ name: "x" }, { $not: { name: { $regx: "x" } } })).toBe(false);
    expect(evalCondition({ name: "x" }, { $nor: [{ name: { $regex: "[" } }] })).toBe(false);
    expect(evalCondition({ name: "x" }, { name: { $not: { $in: "not a list" } } })).toBe(false);
  });

  it("non-object conditions never match", () => {
    for (const condition of [null, undefined, 0, 1, "", "name", true, false, [], [{}]]) {
      expect(evalCondition({ name: "x" }, condition)).toBe(false);
    }
    expect(evalCondition({ name: "x" }, { $and: {} })).toBe(false);
    expect(evalCondition({ name: "x" }, { $or: [{ name: "x" }, 5] })).toBe(false);
  });

  it("builds each regex when compiling, never when evaluating", () => {
    const Original = RegExp;
    let built = 0;
    class CountingRegExp extends Original {
      constructor(pattern: string | RegExp, flags?: string) {
        super(pattern, flags);
        built++;
      }
    }
    const global = globalThis as { RegExp: unknown };
    global.RegExp = CountingRegExp;
    try {
      const predicate = compileCondition({ ua: { $regex: "Mobile" }, $or: [{ os: { $regexi: "^ios" } }, { os: "android" }] });
      expect(built).toBe(2);
      for (let i = 0; i < 100; i++) {
        expect(predicate({ ua: "Android Mobile", os: i % 2 ? "iOS 17" : "android" })).toBe(true);
      }
      expect(built).toBe(2);
    } finally {
      global.RegExp = Original;
    }
  });

  it("reads the condition and the saved groups only while compiling", () => {
    const condition = { version: { $vgte: "2.0.0" }, id: { $inGroup: "beta" }, plan: { $in: ["pro"] } };
    const groups: Record<string, unknown[]> = { beta: ["u1"] };
    const predicate = compileCondition(condition, groups);
    condition.version.$vgte = "9.0.0";
    condition.plan.$in.push("free");
    groups.beta = ["u2"];
    expect(predicate({ version: "2.1.0", id: "u1", plan: "pro" })).toBe(true);
    expect(predicate({ version: "2.1.0", id: "u2", plan: "pro" })).toBe(false);
    expect(predicate({ version: "2.1.0", id: "u1", plan: "free" })).toBe(false);
  });

  it("never throws on hostile contexts", () => {
    const predicate = compileCondition({ "a.b": 1, c: { $gt: 0 } });
    const throwing = Object.defineProperty({}, "a", { enumerable: true, get: () => { throw new Error("boom"); } });
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const context of [throwing, revoked.proxy, cyclic, Object.create(null) as Record<string, unknown>]) {
      expect(() => predicate(context)).not.toThrow();
      expect(compileCondition({ self: { self: {} } })(context)).toBe(false);
    }
  });

  it("never reads built-in prototype members as attributes or groups", () => {
    expect(evalCondition({}, { constructor: { $exists: true } })).toBe(false);
    expect(evalCondition({ a: {} }, { "a.toString": { $exists: true } })).toBe(false);
    expect(evalCondition({ a: { constructor: "x" } }, { "a.constructor": "x" })).toBe(true);
    expect(evalCondition({ tags: [1, 2] }, { "tags.length": 2, "tags.1": 2 })).toBe(true);
    expect(evalCondition({}, { id: { $inGroup: "constructor" } }, {})).toBe(false);
  });
});

describe("where Vane deliberately differs from GrowthBook's JS SDK (no fixture row covers these)", () => {
  it("a missing value is not the text \"null\", not 0 and not matched by a regex", () => {
    expect(evalCondition({}, { name: "null" })).toBe(false);
    expect(evalCondition({}, { count: 0 })).toBe(false);
    expect(evalCondition({ count: "" }, { count: 0 })).toBe(false);
    expect(evalCondition({ count: "0" }, { count: 0 })).toBe(true);
    expect(evalCondition({ count: 10 }, { count: "10" })).toBe(true);
    expect(evalCondition({}, { name: { $regex: "ull" } })).toBe(false);
  });

  it("arrays and objects are not coerced to text or numbers", () => {
    expect(evalCondition({ tags: ["a"] }, { tags: "a" })).toBe(false);
    expect(evalCondition({ tags: ["a", "b"] }, { tags: { $regex: "a,b" } })).toBe(false);
    expect(evalCondition({ tags: [] }, { tags: { $lt: 1 } })).toBe(false);
  });

  it("$eq on arrays and objects is structural, and object key order does not matter", () => {
    expect(evalCondition({ tags: ["a", "b"] }, { tags: { $eq: ["a", "b"] } })).toBe(true);
    expect(evalCondition({ tags: ["a", "b"] }, { tags: { $ne: ["a", "b"] } })).toBe(false);
    expect(evalCondition({ o: { a: 1, b: 2 } }, { o: { b: 2, a: 1 } })).toBe(true);
  });

  it("$elemMatch tests falsy elements too", () => {
    expect(evalCondition({ nums: [0, 5] }, { nums: { $elemMatch: { $lt: 1 } } })).toBe(true);
    expect(evalCondition({ flags: [false] }, { flags: { $elemMatch: { $eq: false } } })).toBe(true);
  });

  it("shares GrowthBook's own choices: empty $or matches, so empty $nor does not", () => {
    expect(evalCondition({}, { $or: [] })).toBe(true);
    expect(evalCondition({}, { $nor: [] })).toBe(false);
  });
});

describe("versions", () => {
  it("pads version operands GrowthBook's way", () => {
    expect(padVersion("v1.2.3+build")).toBe("    1-    2-    3-~");
    expect(padVersion("1.0.0-rc.1")).toBe("    1-    0-    0-rc-    1");
    expect(padVersion(undefined)).toBe("    0");
  });

  it("compares a value's version exactly as comparing the padded strings would", () => {
    const versionText = fc.stringMatching(/^v?[0-9a-zA-Z.\-+~ !\n]{0,14}$/);
    const version = fc.oneof(versionText, fc.constantFrom("1.2.3", "1.2.3-rc.1", "10.0.0", "1.0.0--", "123456.1.1"), fc.integer(), fc.double(), fc.constant(null));
    fc.assert(
      fc.property(version, version, (value, operand) => {
        const a = padVersion(value);
        const b = padVersion(operand);
        expect(compareVersion(value, b)).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
      { numRuns: 5000 },
    );
  });
});

describe("never throws", () => {
  const operators = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$ini", "$nini", "$all", "$alli", "$elemMatch", "$size", "$exists", "$type", "$regex", "$regexi", "$not", "$and", "$or", "$nor", "$veq", "$vne", "$vgt", "$vgte", "$vlt", "$vlte", "$inGroup", "$notInGroup", "$bogus"];
  const key = fc.oneof(fc.constantFrom(...operators), fc.constantFrom("a", "b", "a.b", "a.0", "__proto__", "constructor"), fc.string());
  const { condition } = fc.letrec((tie) => ({
    condition: fc.oneof({ depthSize: "small" }, fc.jsonValue({ maxDepth: 2 }), fc.dictionary(key, tie("condition"), { maxKeys: 4 }), fc.array(tie("condition"), { maxLength: 3 })),
  }));
  const context = fc.dictionary(fc.constantFrom("a", "b", "c", "__proto__"), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 });
  const groups = fc.dictionary(fc.string(), fc.array(fc.jsonValue({ maxDepth: 1 })));

  it("on arbitrary JSON conditions and contexts", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (cond, ctx) => {
        expect(typeof compileCondition(cond)(ctx as Record<string, unknown>)).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });

  it("on operator-shaped conditions, contexts and saved groups", () => {
    fc.assert(
      fc.property(condition, fc.oneof(context, fc.jsonValue()), groups, (cond, ctx, savedGroups) => {
        const predicate = compileCondition(cond, savedGroups);
        const once = predicate(ctx as Record<string, unknown>);
        expect(typeof once).toBe("boolean");
        expect(predicate(ctx as Record<string, unknown>)).toBe(once);
        expect(evalCondition(ctx as Record<string, unknown>, cond, savedGroups)).toBe(once);
      }),
      { numRuns: 2000 },
    );
  });

  it("on arbitrary JavaScript contexts", () => {
    fc.assert(
      fc.property(condition, fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true }), (cond, ctx) => {
        expect(typeof compileCondition(cond)(ctx as Record<string, unknown>)).toBe("boolean");
      }),
      { numRuns: 1000 },
    );
  });
});

// The getters' memo compares only these fields (src/bundle/layer-outcomes.ts): a field left out
// that a condition reads would serve a stale outcome.
describe("conditionFields", () => {
  it("names the top-level fields of paths, through $and, $or, $nor and $not, but not inside $elemMatch", () => {
    const condition = { "a.b": 1, $or: [{ c: 1 }, { $nor: [{ d: { $gt: 1 } }] }], $not: { e: 1 }, f: { $elemMatch: { g: 1 } } };
    expect([...conditionFields(condition)!].sort()).toEqual(["a", "c", "d", "e", "f"]);
  });

  it("covers every field a fixture condition's answer depends on", () => {
    for (const { name, condition, attributes, savedGroups } of rows) {
      const fields = conditionFields(condition)!;
      const read = Object.fromEntries(Object.entries(attributes).filter(([key]) => fields.has(key)));
      expect(evalCondition(read, condition, savedGroups), name).toBe(evalCondition(attributes, condition, savedGroups));
    }
  });

  it("cannot tell for a condition too deep to walk", () => {
    let deep: Record<string, unknown> = { a: 1 };
    for (let i = 0; i < 100_000; i++) deep = { $not: deep };
    expect(conditionFields(deep)).toBeUndefined();
  });
});

