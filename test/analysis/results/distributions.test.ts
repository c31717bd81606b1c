// The distributions against closed forms (t with 1 and 2 degrees of freedom, chi-square with 2,
// the normal through erfc identities) and published table values.
import { describe, expect, it } from "vitest";
import {
  betaRegularized,
  chiSquareUpperTail,
  gammaQ,
  logGamma,
  normalQuantile,
  normalUpperTail,
  studentCritical,
  studentTwoSided,
} from "../../../src/analysis/results/distributions.js";

/** Within `relative` of `expected`, or within 1e-15 of it near 0 (where double rounding dominates). */
const close = (actual: number, expected: number, relative = 1e-10) => expect(Math.abs(actual - expected)).toBeLessThanOrEqual(Math.max(1e-15, relative * Math.abs(expected)));

describe("special functions", () => {
  it("logGamma matches factorials and Γ(1/2) = √π", () => {
    for (let n = 1; n <= 20; n++) {
      let factorial = 1;
      for (let k = 2; k < n; k++) factorial *= k;
      close(logGamma(n), Math.log(factorial), 1e-12);
    }
    close(logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-12);
  });

  it("gammaQ(1, x) = e^−x and gammaQ(n, x) is the Poisson tail", () => {
    for (const x of [0.01, 0.5, 1, 3, 10, 40]) close(gammaQ(1, x), Math.exp(-x), 1e-12);
    // Q(n, x) = P(Poisson(x) < n) = e^−x Σ_{k<n} x^k/k!
    for (const [n, x] of [[3, 2.5], [10, 4], [5, 12]] as const) {
      let sum = 0;
      let term = 1;
      for (let k = 0; k < n; k++) {
        sum += term;
        term *= x / (k + 1);
      }
      close(gammaQ(n, x), Math.exp(-x) * sum, 1e-11);
    }
  });

  it("betaRegularized(x, a, 1) = x^a and I_x(1, b) = 1 − (1−x)^b", () => {
    for (const x of [0.05, 0.3, 0.7, 0.99]) {
      close(betaRegularized(x, 2.5, 1), x ** 2.5, 1e-11);
      close(betaRegularized(x, 1, 3.5), 1 - (1 - x) ** 3.5, 1e-11);
    }
  });

  it("refuses arguments outside the domain", () => {
    expect(() => gammaQ(0, 1)).toThrow(RangeError);
    expect(() => betaRegularized(1.5, 1, 1)).toThrow(RangeError);
    expect(() => normalQuantile(1)).toThrow(RangeError);
    expect(() => studentTwoSided(1, 0)).toThrow(RangeError);
  });
});

describe("normal", () => {
  it("tail and quantile match tables and invert each other", () => {
    close(normalUpperTail(1.959963984540054), 0.025, 1e-12);
    close(normalUpperTail(0), 0.5, 1e-14);
    close(normalUpperTail(-1), 0.8413447460685429, 1e-12);
    close(normalUpperTail(6), 9.865876450376946e-10, 1e-9);
    close(normalQuantile(0.975), 1.959963984540054, 1e-13);
    close(normalQuantile(0.995), 2.5758293035489004, 1e-13);
    close(normalQuantile(1e-6), -4.753424308822899, 1e-11);
    for (const p of [1e-10, 0.001, 0.02, 0.3, 0.5, 0.8, 0.99]) close(1 - normalUpperTail(normalQuantile(p)), p, 1e-9);
  });
});

describe("Student's t", () => {
  it("one degree of freedom is the Cauchy: P(|T| > t) = 1 − 2·atan(t)/π", () => {
    for (const t of [0.1, 1, 3, 12.7, 100]) close(studentTwoSided(t, 1), 1 - (2 * Math.atan(t)) / Math.PI, 1e-10);
  });

  it("two degrees of freedom: P(|T| > t) = 1 − t/√(2 + t²)", () => {
    for (const t of [0.2, 1, 4.3, 30]) close(studentTwoSided(t, 2), 1 - t / Math.sqrt(2 + t * t), 1e-10);
  });

  it("critical values match the published table, and the normal at infinite df", () => {
    const table: [number, number][] = [[1, 12.706204736174698], [2, 4.302652729749464], [5, 2.570581835636314], [10, 2.228138851986274], [30, 2.042272456301238], [100, 1.983971518523552]];
    for (const [df, t] of table) close(studentCritical(0.05, df), t, 1e-9);
    close(studentCritical(0.05, Infinity), 1.959963984540054, 1e-13);
    close(studentCritical(0.05, 1e7), 1.959963984540054, 1e-6);
    close(studentTwoSided(2.228138851986274, 10), 0.05, 1e-9);
  });
});

describe("chi-square", () => {
  it("two degrees of freedom: P(X > x) = e^(−x/2)", () => {
    for (const x of [0.1, 2, 13.8155, 50]) close(chiSquareUpperTail(x, 2), Math.exp(-x / 2), 1e-11);
  });

  it("matches the table's 95% and 99.9% points", () => {
    close(chiSquareUpperTail(3.841458820694124, 1), 0.05, 1e-9);
    close(chiSquareUpperTail(10.827566170662733, 1), 0.001, 1e-8);
    close(chiSquareUpperTail(16.26623619623813, 3), 0.001, 1e-8);
    expect(chiSquareUpperTail(0, 4)).toBe(1);
  });
});
