// The whole engine: BucketEngine (hashing, bucketing, allocation lookup) and BatchBucketEngine
// (many units at once), plus randomness and the bandits (Thompson, UCB1, epsilon-greedy, linear
// Thompson and LinUCB), for the server and the library. Same rules as the base: arguments
// checked, static buffers only.
import { DIST, RNG_STATE_BYTES, type Distribution } from "./abi.js";
import { BatchBucketEngine } from "./batch-engine.js";
import { checkArms, checkCount, checkNonNegative, exactMean, exactSd, finite, nonNegative, positive } from "./checks.js";
import { LinearArms, type LinearArmState, checkContext, isLinearArms, packLinearArms } from "./linear.js";
import { markBuilt } from "./tables.js";

/** A context whose scores under the given arms are beyond what the engine computes exactly: the input's size, not a fault. */
export class ScoreRangeError extends RangeError {
  override readonly name = "ScoreRangeError";
}

export type ArmPosteriors =
  | { readonly kind: "beta"; readonly alpha: ArrayLike<number>; readonly beta: ArrayLike<number> }
  | { readonly kind: "gaussian"; readonly mean: ArrayLike<number>; readonly sd: ArrayLike<number> };

export interface ArmChoice {
  readonly arm: number;
  readonly propensities: Float64Array;
}

/** A choice by scores (UCB1, LinUCB): the best scores share the propensity. */
export interface Ucb1Choice extends ArmChoice {
  readonly scores: Float64Array;
}

const MAX_DRAWS = 100_000_000;
const MAX_SAMPLES_PER_CALL = 100_000_000;

export class Engine extends BatchBucketEngine {
  private loadedLinear: LinearArms | null = null;

  // ---- randomness ----

  seed(seed: number): void {
    if (!Number.isInteger(seed)) throw new TypeError(`seed must be an integer, got ${String(seed)}`);
    this.wasm.rngSeed(seed >>> 0);
  }

  /** The generator's whole state (16 bytes), to store and later restore with setRngState. */
  rngState(): Uint8Array {
    this.wasm.rngSave();
    return this.u8.slice(this.at.rng, this.at.rng + RNG_STATE_BYTES);
  }

  setRngState(state: Uint8Array): void {
    if (!(state instanceof Uint8Array) || state.length !== RNG_STATE_BYTES) {
      throw new RangeError(`an RNG state is a Uint8Array of ${RNG_STATE_BYTES} bytes`);
    }
    if (state.every((b) => b === 0)) throw new RangeError("an RNG state cannot have all-zero words");
    this.u8.set(state, this.at.rng);
    this.wasm.rngLoad();
  }

  /** `count` draws from a distribution: uniform, normal, gamma(shape) or beta(a, b). */
  sample(dist: Distribution, count: number, p1 = 0, p2 = 0): Float64Array {
    const id = Object.hasOwn(DIST, dist) ? DIST[dist] : undefined;
    if (id === undefined) throw new RangeError(`dist must be one of ${Object.keys(DIST).join(", ")}, got ${String(dist)}`);
    checkCount("count", count, MAX_SAMPLES_PER_CALL);
    if (dist === "gamma") checkArms(1, [["shape", [p1], positive, "a finite number > 0"]]);
    if (dist === "beta") checkArms(2, [["beta parameters", [p1, p2], positive, "a finite number > 0"]]);
    const result = new Float64Array(count);
    for (let done = 0; done < count; ) {
      const n = Math.min(this.capacity.maxSamples, count - done);
      this.wasm.sample(id, n, p1, p2);
      const from = this.at.samples >>> 3;
      result.set(this.f64.subarray(from, from + n), done);
      done += n;
    }
    return result;
  }

  // ---- bandits ----

  /** Thompson draw over Beta(alpha[i], beta[i]) arms: the arm with the greatest draw. */
  thompsonBeta(alpha: ArrayLike<number>, beta: ArrayLike<number>, draws?: Float64Array): number {
    const n = checkArms(this.capacity.maxArms, [
      ["alpha", alpha, positive, "a finite number > 0"],
      ["beta", beta, positive, "a finite number > 0"],
    ]);
    this.writeArms(alpha, beta);
    const arm = this.wasm.thompsonBeta(n);
    if (draws) this.readArmOut(draws, n);
    return arm;
  }

  /** Thompson draw over Normal(mean[i], sd[i]) arms. */
  thompsonGaussian(mean: ArrayLike<number>, sd: ArrayLike<number>, draws?: Float64Array): number {
    const n = checkArms(this.capacity.maxArms, [
      ["mean", mean, finite, "a finite number"],
      ["sd", sd, nonNegative, "a finite number >= 0"],
    ]);
    this.writeArms(mean, sd);
    const arm = this.wasm.thompsonGaussian(n);
    if (draws) this.readArmOut(draws, n);
    return arm;
  }

  /** Each arm's probability of having the greatest draw, by Monte Carlo over `draws` joint draws. */
  winProbabilities(arms: ArmPosteriors, draws: number): Float64Array {
    const gaussian = arms?.kind === "gaussian";
    if (!gaussian && arms?.kind !== "beta") throw new TypeError('arms must be { kind: "beta", alpha, beta } or { kind: "gaussian", mean, sd }');
    checkCount("draws", draws, MAX_DRAWS);
    const [a, b] = gaussian ? [arms.mean, arms.sd] : [arms.alpha, arms.beta];
    const n = gaussian
      ? checkArms(this.capacity.maxArms, [["mean", a, finite, "a finite number"], ["sd", b, nonNegative, "a finite number >= 0"]])
      : checkArms(this.capacity.maxArms, [["alpha", a, positive, "a finite number > 0"], ["beta", b, positive, "a finite number > 0"]]);
    this.writeArms(a, b);
    this.wasm.winProbabilities(n, draws, gaussian ? 1 : 0);
    return this.readArmOut(new Float64Array(n), n);
  }

  /**
   * Each Normal(mean[i], sd[i]) arm's exact probability of the greatest draw, by quadrature: what
   * winProbabilities estimates, without its noise. Arms with sd 0 (or below 1e-300) are point
   * masses; among tied ones the lowest index wins, as in thompsonGaussian.
   */
  gaussianWinProbabilities(mean: ArrayLike<number>, sd: ArrayLike<number>): Float64Array {
    const n = checkArms(this.capacity.maxArms, [
      ["mean", mean, exactMean, "a number from -1e300 to 1e300"],
      ["sd", sd, exactSd, "a number from 0 to 1e300"],
    ]);
    this.writeArms(mean, sd);
    this.wasm.gaussianWinProbabilities(n);
    return this.readArmOut(new Float64Array(n), n);
  }

  /** UCB1: scores, propensities (tied best arms share 1) and an arm drawn by them. */
  ucb1(pulls: ArrayLike<number>, means: ArrayLike<number>, c = Math.SQRT2): Ucb1Choice {
    const n = checkArms(this.capacity.maxArms, [
      ["pulls", pulls, nonNegative, "a finite number >= 0"],
      ["means", means, finite, "a finite number"],
    ]);
    checkArms(1, [["c", [c], nonNegative, "a finite number >= 0"]]);
    this.writeArms(pulls, means);
    const arm = this.wasm.ucb1(n, c);
    const from = this.at.armAux >>> 3;
    return { arm, propensities: this.readArmOut(new Float64Array(n), n), scores: this.f64.slice(from, from + n) };
  }

  /** Epsilon-greedy: every arm gets epsilon / k, the best arms share 1 - epsilon; an arm drawn by those. */
  epsilonGreedy(means: ArrayLike<number>, epsilon: number): ArmChoice {
    const n = checkArms(this.capacity.maxArms, [["means", means, finite, "a finite number"]]);
    if (typeof epsilon !== "number" || !(epsilon >= 0 && epsilon <= 1)) {
      throw new RangeError(`epsilon must be a number in [0, 1], got ${String(epsilon)}`);
    }
    this.writeArms(means);
    const arm = this.wasm.epsilonGreedy(n, epsilon);
    return { arm, propensities: this.readArmOut(new Float64Array(n), n) };
  }

  // ---- contextual bandits ----

  /**
   * Inverts each arm's A (Cholesky) and solves θ = A⁻¹ b, once per state version: the result
   * is what the decisions below take. A matrix that is not positive definite is a RangeError.
   */
  prepareLinearArms(arms: readonly LinearArmState[], dimension: number): LinearArms {
    const { values, armCount, dimension: d } = packLinearArms(arms, dimension, this.capacity);
    const from = this.at.linear >>> 3;
    this.f64.set(values, from);
    this.loadedLinear = null; // prepared in place: the buffer no longer holds the last arms
    const failed = this.wasm.linearPrepare(armCount, d);
    if (failed >= 0) throw new RangeError(`arms[${failed}].a must be positive definite`);
    values.set(this.f64.subarray(from, from + values.length));
    const prepared = markBuilt(new LinearArms(armCount, d, values));
    this.loadedLinear = prepared;
    return prepared;
  }

  /** Linear Thompson sampling: a Gaussian Thompson draw over means xᵀθ and sds v·sqrt(xᵀA⁻¹x). */
  linearThompson(arms: LinearArms, x: ArrayLike<number>, v: number, draws?: Float64Array): number {
    const n = this.linearScores(arms, x, checkNonNegative("v", v));
    const arm = this.wasm.thompsonGaussian(n);
    if (draws) this.readArmOut(draws, n);
    return arm;
  }

  /** Each arm's probability of winning linearThompson for this x, over `draws` joint draws. */
  linearWinProbabilities(arms: LinearArms, x: ArrayLike<number>, v: number, draws: number): Float64Array {
    checkCount("draws", draws, MAX_DRAWS);
    const n = this.linearScores(arms, x, checkNonNegative("v", v));
    this.wasm.winProbabilities(n, draws, 1);
    return this.readArmOut(new Float64Array(n), n);
  }

  /** Each arm's exact probability of winning linearThompson for this x: gaussianWinProbabilities over its Gaussians. */
  linearWinProbabilitiesExact(arms: LinearArms, x: ArrayLike<number>, v: number): Float64Array {
    const n = this.linearScores(arms, x, checkNonNegative("v", v));
    if (!this.wasm.gaussianWinProbabilities(n)) {
      throw new ScoreRangeError("x and v give a mean or sd beyond 1e300; scale the features or v down");
    }
    return this.readArmOut(new Float64Array(n), n);
  }

  /** LinUCB: scores xᵀθ + alpha·sqrt(xᵀA⁻¹x), propensities (tied best arms share 1), an arm drawn by them. */
  linUcb(arms: LinearArms, x: ArrayLike<number>, alpha: number): Ucb1Choice {
    checkNonNegative("alpha", alpha);
    const n = this.linearScores(arms, x, 1);
    const arm = this.wasm.linUcb(n, alpha);
    const from = this.at.armAux >>> 3;
    return { arm, propensities: this.readArmOut(new Float64Array(n), n), scores: this.f64.slice(from, from + n) };
  }

  /** Means to ARM_A, spread·sqrt(xᵀA⁻¹x) to ARM_B; loads the arms unless they are loaded already. */
  private linearScores(arms: LinearArms, x: ArrayLike<number>, spread: number): number {
    if (!isLinearArms(arms)) throw new TypeError("arms must be LinearArms from engine.prepareLinearArms()");
    checkContext(x, arms.dimension);
    if (this.loadedLinear !== arms) {
      this.f64.set(arms.values, this.at.linear >>> 3);
      this.loadedLinear = arms;
    }
    this.f64.set(x, this.at.context >>> 3);
    if (!this.wasm.linearScores(arms.armCount, arms.dimension, spread)) {
      throw new ScoreRangeError("x and the spread give scores too large for floating point; scale the features down");
    }
    return arms.armCount;
  }

  // ---- buffers ----

  private writeArms(a: ArrayLike<number>, b?: ArrayLike<number>): void {
    this.f64.set(a, this.at.armA >>> 3);
    if (b) this.f64.set(b, this.at.armB >>> 3);
  }

  private readArmOut(into: Float64Array, n: number): Float64Array {
    const from = this.at.armOut >>> 3;
    into.set(this.f64.subarray(from, from + Math.min(n, into.length)));
    return into;
  }
}
