import { beforeAll, describe, expect, it } from "vitest";
import { type Engine, RangeTable, SaltSet, loadEngine } from "../../src/index.js";
import { LinearArms } from "../../src/engine/linear.js";

// Bad input to the TypeScript API is a TypeError or RangeError naming the argument: never a
// wasm trap, never a quietly wrong answer.
describe("bad input", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine();
  });

  const any = (x: unknown) => x as never;

  it.each([
    ["0", 0],
    ["negative", -5],
    ["fractional", 10.5],
    ["NaN", Number.NaN],
    ["Infinity", Infinity],
    ["above 2^32 - 1", 2 ** 32],
  ])("bucketCount %s is a RangeError", (_, n) => {
    expect(() => engine.bucket("salt", "u", n)).toThrow(RangeError);
    expect(() => engine.bucket("salt", "u", n)).toThrow(/bucketCount must be an integer from 1 to 4294967295/);
    expect(() => engine.bucketUnits("salt", ["u"], n)).toThrow(RangeError);
    expect(() => engine.bucketSalts(engine.saltSet(["s"]), "u", n)).toThrow(RangeError);
  });

  it("a bucketCount that is not a number is a TypeError", () => {
    expect(() => engine.bucket("salt", "u", any("1000"))).toThrow(TypeError);
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["NaN", Number.NaN],
    ["Infinity", -Infinity],
    ["a boolean", true],
    ["an object", { id: 1 }],
    ["an array", ["u"]],
    ["a bigint", 10n],
  ])("a unit that is %s is a TypeError", (_, unit) => {
    expect(() => engine.bucket("salt", any(unit), 1000)).toThrow(/unit must be a string or a finite number/);
    expect(() => engine.bucketUnits("salt", ["ok", any(unit)], 1000)).toThrow(TypeError);
    expect(() => engine.bucketSalts(engine.saltSet(["s"]), any(unit), 1000)).toThrow(TypeError);
  });

  it("a salt set's own bucket counts must line up, and then no count is passed", () => {
    expect(() => engine.saltSet(["a", "b"], [10])).toThrow(/one count per salt \(2\)/);
    expect(() => engine.saltSet(["a"], [0])).toThrow(RangeError);
    expect(() => engine.bucketSalts(engine.saltSet(["a"], [10]), "u", 10)).toThrow(/carries its own bucket counts/);
    expect(() => engine.bucketSalts(engine.saltSet(["a"]), "u")).toThrow(TypeError);
  });

  it("salts must be strings, batches must be arrays and prepared tables", () => {
    expect(() => engine.bucket(any(12), "u", 10)).toThrow(/salt must be a string/);
    expect(() => engine.saltSet(["a", any(null)])).toThrow(TypeError);
    expect(() => engine.bucketUnits("s", any("u1,u2"), 10)).toThrow(TypeError);
    expect(() => engine.bucketSalts(any(["a", "b"]), "u", 10)).toThrow(/SaltSet/);
    expect(() => engine.bucketUnits("s", ["a", "b"], 10, new Uint32Array(1))).toThrow(RangeError);
    expect(() => engine.sha256(any("abc"))).toThrow(TypeError);
  });

  it("refuses look-alike tables not made by saltSet()/rangeTable(): their sizes are unchecked", () => {
    const hugeTable = new RangeTable(new Uint32Array(40_000), [{ start: 0, count: 20_000, originalIndex: new Int32Array(20_000) }]);
    expect(() => engine.allocationIndex(hugeTable, 0, 1)).toThrow(/RangeTable from engine.rangeTable/);
    const real = engine.saltSet(["a"], [10]);
    const fake = new SaltSet(real.salts, [{ ...(real.chunks[0] as object), moduli: undefined } as never], real.bucketCounts);
    expect(() => engine.bucketSalts(fake, "u")).toThrow(/SaltSet from engine.saltSet/);
    expect(engine.bucket("exp-layer", "user-1", 1000)).toBe(122); // nothing was overwritten
  });

  it("allocation lookup refuses a bad list index or bucket", () => {
    const table = engine.rangeTable([[[0, 9]]]);
    expect(() => engine.allocationIndex(table, 1, 0)).toThrow(RangeError);
    expect(() => engine.allocationIndex(table, 0, -1)).toThrow(RangeError);
    expect(() => engine.allocationIndex(table, 0, 1.5)).toThrow(RangeError);
    expect(() => engine.allocationIndex(any([[0, 9]]), 0, 1)).toThrow(TypeError);
  });

  it("an empty arm list is a RangeError for every bandit call", () => {
    expect(() => engine.thompsonBeta([], [])).toThrow(/alpha must list at least one arm/);
    expect(() => engine.thompsonGaussian([], [])).toThrow(RangeError);
    expect(() => engine.winProbabilities({ kind: "beta", alpha: [], beta: [] }, 100)).toThrow(RangeError);
    expect(() => engine.ucb1([], [])).toThrow(RangeError);
    expect(() => engine.epsilonGreedy([], 0.1)).toThrow(RangeError);
    expect(() => engine.pickWeighted([], 0.5)).toThrow(RangeError);
  });

  it("arm inputs must line up and be in range", () => {
    expect(() => engine.thompsonBeta([1, 2], [1])).toThrow(/beta has 1 arms, expected 2/);
    expect(() => engine.thompsonBeta([1, 0], [1, 1])).toThrow(/alpha\[1\] must be a finite number > 0/);
    expect(() => engine.thompsonBeta([1, Number.NaN], [1, 1])).toThrow(RangeError);
    expect(() => engine.thompsonGaussian([0, 1], [1, -1])).toThrow(/sd\[1\]/);
    expect(() => engine.ucb1([1, -1], [0, 0])).toThrow(/pulls\[1\]/);
    expect(() => engine.epsilonGreedy([0.1, 0.2], 1.5)).toThrow(/epsilon must be a number in \[0, 1\]/);
    expect(() => engine.pickWeighted([0.5, 0.5], 1)).toThrow(/x must be a number in \[0, 1\)/);
    expect(() => engine.pickWeighted([0.5, -0.5], 0.1)).toThrow(RangeError);
    expect(() => engine.thompsonBeta(new Array(engine.capacity.maxArms + 1).fill(1), new Array(engine.capacity.maxArms + 1).fill(1))).toThrow(/at most/);
    expect(() => engine.winProbabilities(any({ kind: "poisson" }), 10)).toThrow(TypeError);
    expect(() => engine.winProbabilities({ kind: "beta", alpha: [1], beta: [1] }, 0)).toThrow(/draws must be an integer/);
  });

  it("exact Gaussian win probabilities take |mean| and sd up to 1e300", () => {
    expect(() => engine.gaussianWinProbabilities([], [])).toThrow(/mean must list at least one arm/);
    expect(() => engine.gaussianWinProbabilities([0, 1], [1])).toThrow(/sd has 1 arms, expected 2/);
    expect(() => engine.gaussianWinProbabilities([0, 2e300], [1, 1])).toThrow(/mean\[1\] must be a number from -1e300 to 1e300/);
    expect(() => engine.gaussianWinProbabilities([0, Number.NaN], [1, 1])).toThrow(RangeError);
    expect(() => engine.gaussianWinProbabilities([0, 1], [1, -1])).toThrow(/sd\[1\] must be a number from 0 to 1e300/);
    expect(() => engine.gaussianWinProbabilities([0, 1], [1, Infinity])).toThrow(RangeError);
    const arms = engine.prepareLinearArms([{ a: [1, 0, 0, 1], b: [1, 0] }, { a: [1, 0, 0, 1], b: [0, 1] }], 2);
    expect(() => engine.linearWinProbabilitiesExact(arms, [1, 0], -1)).toThrow(/v must be a finite number >= 0/);
    expect(() => engine.linearWinProbabilitiesExact(arms, [1e150, 0], 1e155)).toThrow(/beyond 1e300/);
  });

  it("sampling and RNG state refuse what they cannot honour", () => {
    expect(() => engine.sample(any("cauchy"), 10)).toThrow(RangeError);
    expect(() => engine.sample("gamma", 10, 0)).toThrow(RangeError);
    expect(() => engine.sample("beta", 10, 1, -1)).toThrow(RangeError);
    expect(() => engine.sample("uniform", 0)).toThrow(RangeError);
    expect(() => engine.seed(1.5)).toThrow(TypeError);
    expect(() => engine.setRngState(new Uint8Array(15))).toThrow(RangeError);
    expect(() => engine.setRngState(new Uint8Array(16))).toThrow(/all-zero/);
  });

  it("contextual arms refuse bad state, context and parameters", () => {
    const arm = { a: [2, 0.5, 0.5, 1], b: [1, 0] };
    expect(() => engine.prepareLinearArms([], 2)).toThrow(/arms must list at least one arm/);
    expect(() => engine.prepareLinearArms(any({ a: [1], b: [1] }), 1)).toThrow(TypeError);
    expect(() => engine.prepareLinearArms([arm], 0)).toThrow(/dimension must be an integer from 1 to 32/);
    expect(() => engine.prepareLinearArms([arm], 33)).toThrow(RangeError);
    expect(() => engine.prepareLinearArms([arm, { a: [1, 0, 0], b: [0, 0] }], 2)).toThrow(/arms\[1\]\.a must have 4 values, got 3/);
    expect(() => engine.prepareLinearArms([{ a: arm.a, b: [0] }], 2)).toThrow(/arms\[0\]\.b must have 2 values/);
    expect(() => engine.prepareLinearArms([{ a: [1, 0, 0, Number.NaN], b: [0, 0] }], 2)).toThrow(/arms\[0\]\.a\[3\] must be a finite number/);
    expect(() => engine.prepareLinearArms([any({ a: arm.a })], 2)).toThrow(TypeError);
    expect(() => engine.prepareLinearArms([{ a: [1, 0.5, 0.4, 1], b: [0, 0] }], 2)).toThrow(/must be symmetric; entries \(1, 0\) and \(0, 1\) differ/);
    const identity32 = Array.from({ length: 32 * 32 }, (_, i) => (i % 33 === 0 ? 1 : 0));
    const wide = { a: identity32, b: new Array(32).fill(0) };
    expect(engine.prepareLinearArms(new Array(64).fill(wide), 32).armCount).toBe(64);
    expect(() => engine.prepareLinearArms(new Array(65).fill(wide), 32)).toThrow(/arms lists 65 arms; at most 64 at dimension 32/);

    const prepared = engine.prepareLinearArms([arm, arm], 2);
    expect(() => prepared.theta(2)).toThrow(RangeError);
    expect(() => engine.linUcb(prepared, [1], 1)).toThrow(/x must have 2 values, got 1/);
    expect(() => engine.linearThompson(prepared, [1, Number.POSITIVE_INFINITY], 1)).toThrow(/x\[1\] must be a finite number/);
    expect(() => engine.linearThompson(prepared, [1, 0], -1)).toThrow(/v must be a finite number >= 0/);
    expect(() => engine.linUcb(prepared, [1, 0], Number.NaN)).toThrow(/alpha must be a finite number >= 0/);
    expect(() => engine.linearWinProbabilities(prepared, [1, 0], 1, 0)).toThrow(/draws must be an integer/);
    const lookAlike = new LinearArms(1000, 32, new Float64Array(4));
    expect(() => engine.linUcb(lookAlike, new Array(32).fill(0), 1)).toThrow(/LinearArms from engine.prepareLinearArms/);
    expect(() => engine.linUcb(any({ armCount: 2, dimension: 2, values: prepared.values }), [1, 0], 1)).toThrow(TypeError);
  });
});
