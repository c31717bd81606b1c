// Bandit arm choice and propensities. Per-arm inputs come in ARM_A/ARM_B, results go to ARM_OUT
// (and ARM_AUX), the chosen arm is the return value.
import { ARM_A, ARM_AUX, ARM_B, ARM_OUT, MAX_ARMS } from "./layout";
import { pickFrom } from "./alloc";
import { betaFrom, gammaParams, normal, uniform } from "./rng";

@inline function armA(i: i32): f64 { return load<f64>(ARM_A + (<usize>i << 3)); }
@inline function armB(i: i32): f64 { return load<f64>(ARM_B + (<usize>i << 3)); }
@inline function setOut(i: i32, x: f64): void { store<f64>(ARM_OUT + (<usize>i << 3), x); }
@inline function out(i: i32): f64 { return load<f64>(ARM_OUT + (<usize>i << 3)); }

// Per-arm gamma constants of Beta arms (alpha's then beta's, 3 f64 each), computed once per
// call rather than once per draw.
const BETA_PARAMS: usize = memory.data(MAX_ARMS * 48, 16);

function prepareBetaArms(armCount: i32): void {
  for (let i = 0; i < armCount; i++) {
    const p = BETA_PARAMS + <usize>i * 48;
    gammaParams(armA(i), p);
    gammaParams(armB(i), p + 24);
  }
}

@inline function drawBetaArm(i: i32): f64 {
  const p = BETA_PARAMS + <usize>i * 48;
  return betaFrom(p, p + 24, armA(i), armB(i));
}

/** Thompson draw over Beta(ARM_A[i], ARM_B[i]) arms; draws to ARM_OUT, returns the argmax. */
export function thompsonBeta(armCount: i32): i32 {
  prepareBetaArms(armCount);
  let best = 0, bestDraw = -Infinity;
  for (let i = 0; i < armCount; i++) {
    const x = drawBetaArm(i);
    setOut(i, x);
    if (x > bestDraw) { best = i; bestDraw = x; }
  }
  return best;
}

/** Thompson draw over Normal(mean ARM_A[i], sd ARM_B[i]) arms; draws to ARM_OUT. */
export function thompsonGaussian(armCount: i32): i32 {
  let best = 0, bestDraw = -Infinity;
  for (let i = 0; i < armCount; i++) {
    const x = armA(i) + armB(i) * normal();
    setOut(i, x);
    if (x > bestDraw) { best = i; bestDraw = x; }
  }
  return best;
}

/**
 * Monte Carlo probability that each arm has the highest draw, over `draws` joint draws, into
 * ARM_OUT. `gaussian` selects Normal(mean, sd) arms, else Beta(alpha, beta). Ties go to the
 * lower index, as in the single draws.
 */
export function winProbabilities(armCount: i32, draws: i32, gaussian: bool): void {
  for (let i = 0; i < armCount; i++) setOut(i, 0);
  // Two loops rather than a test per draw: the hot loop stays branch-free.
  if (gaussian) {
    for (let n = 0; n < draws; n++) {
      let best = 0, bestDraw = -Infinity;
      for (let i = 0; i < armCount; i++) {
        const x = armA(i) + armB(i) * normal();
        if (x > bestDraw) { best = i; bestDraw = x; }
      }
      setOut(best, out(best) + 1);
    }
  } else {
    prepareBetaArms(armCount);
    for (let n = 0; n < draws; n++) {
      let best = 0, bestDraw = -Infinity;
      for (let i = 0; i < armCount; i++) {
        const x = drawBetaArm(i);
        if (x > bestDraw) { best = i; bestDraw = x; }
      }
      setOut(best, out(best) + 1);
    }
  }
  const scale = 1.0 / <f64>draws;
  for (let i = 0; i < armCount; i++) setOut(i, out(i) * scale);
}

/** Shares 1 - base equally among the arms whose score equals the best; others get base. */
function shareAmongBest(scores: usize, armCount: i32, base: f64): void {
  let best = -Infinity;
  for (let i = 0; i < armCount; i++) best = max(best, load<f64>(scores + (<usize>i << 3)));
  let ties = 0;
  for (let i = 0; i < armCount; i++) if (load<f64>(scores + (<usize>i << 3)) == best) ties++;
  const share = (1 - base * <f64>armCount) / <f64>ties;
  for (let i = 0; i < armCount; i++) {
    setOut(i, load<f64>(scores + (<usize>i << 3)) == best ? base + share : base);
  }
}

/**
 * UCB1 with pulls in ARM_A and mean rewards in ARM_B: score = mean + c * sqrt(ln max(N, 1) / pulls),
 * +Infinity for an arm never pulled. Scores to ARM_AUX, propensities to ARM_OUT (tied best arms
 * share 1), returns an arm drawn by those propensities.
 */
export function ucb1(armCount: i32, c: f64): i32 {
  let total = 0.0;
  for (let i = 0; i < armCount; i++) total += armA(i);
  const logTotal = Math.log(max(total, 1)); // fractional pulls under 1 in all: no bonus, never NaN
  for (let i = 0; i < armCount; i++) {
    const pulls = armA(i);
    const score = pulls > 0 ? armB(i) + c * Math.sqrt(logTotal / pulls) : Infinity;
    store<f64>(ARM_AUX + (<usize>i << 3), score);
  }
  shareAmongBest(ARM_AUX, armCount, 0);
  return pickFrom(ARM_OUT, armCount, uniform());
}

/**
 * LinUCB with means in ARM_A and widths sqrt(x^T A^-1 x) in ARM_B (from linearScores):
 * score = mean + alpha * width to ARM_AUX, propensities to ARM_OUT (tied best arms share 1),
 * returns an arm drawn by those propensities.
 */
export function linUcb(armCount: i32, alpha: f64): i32 {
  for (let i = 0; i < armCount; i++) store<f64>(ARM_AUX + (<usize>i << 3), armA(i) + alpha * armB(i));
  shareAmongBest(ARM_AUX, armCount, 0);
  return pickFrom(ARM_OUT, armCount, uniform());
}

/**
 * Epsilon-greedy with mean rewards in ARM_A: every arm gets epsilon / k, the best arms share
 * 1 - epsilon. Propensities to ARM_OUT, returns an arm drawn by them.
 */
export function epsilonGreedy(armCount: i32, epsilon: f64): i32 {
  shareAmongBest(ARM_A, armCount, epsilon / <f64>armCount);
  return pickFrom(ARM_OUT, armCount, uniform());
}
