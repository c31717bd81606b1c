// Contextual (linear) arms: each arm's ridge-regression state (A, b) becomes (A^-1, theta) once
// per state version; a decision then needs only x^T theta and x^T A^-1 x per arm.
//
// One arm's block in LINEAR, d = dimension, row-major:
//   [ A or A^-1 : d*d f64 ][ b or theta : d f64 ]
import { ARM_A, ARM_B, CONTEXT, LINEAR, MAX_DIMENSION } from "./layout";

// Scratch for one arm: its Cholesky factor L and L^-1, both lower triangular, row-major d x d.
const FACTOR: usize = memory.data(MAX_DIMENSION * MAX_DIMENSION * 8, 16);
const FACTOR_INVERSE: usize = memory.data(MAX_DIMENSION * MAX_DIMENSION * 8, 16);

@inline function at(matrix: usize, d: i32, row: i32, col: i32): usize {
  return matrix + ((<usize>(row * d + col)) << 3);
}

/** Cholesky A = L L^T from A's lower triangle into FACTOR; false when a pivot is not > 0. */
function factor(a: usize, d: i32): bool {
  for (let j = 0; j < d; j++) {
    let s = load<f64>(at(a, d, j, j));
    for (let k = 0; k < j; k++) {
      const l = load<f64>(at(FACTOR, d, j, k));
      s -= l * l;
    }
    if (!(s > 0)) return false;
    const pivot = Math.sqrt(s);
    store<f64>(at(FACTOR, d, j, j), pivot);
    for (let i = j + 1; i < d; i++) {
      let t = load<f64>(at(a, d, i, j));
      for (let k = 0; k < j; k++) t -= load<f64>(at(FACTOR, d, i, k)) * load<f64>(at(FACTOR, d, j, k));
      store<f64>(at(FACTOR, d, i, j), t / pivot);
    }
  }
  return true;
}

/** theta = A^-1 b in place over b: forward solve L y = b, then back solve L^T theta = y. */
function solve(b: usize, d: i32): void {
  for (let i = 0; i < d; i++) {
    let t = load<f64>(b + (<usize>i << 3));
    for (let k = 0; k < i; k++) t -= load<f64>(at(FACTOR, d, i, k)) * load<f64>(b + (<usize>k << 3));
    store<f64>(b + (<usize>i << 3), t / load<f64>(at(FACTOR, d, i, i)));
  }
  for (let i = d - 1; i >= 0; i--) {
    let t = load<f64>(b + (<usize>i << 3));
    for (let k = i + 1; k < d; k++) t -= load<f64>(at(FACTOR, d, k, i)) * load<f64>(b + (<usize>k << 3));
    store<f64>(b + (<usize>i << 3), t / load<f64>(at(FACTOR, d, i, i)));
  }
}

/** A^-1 = W^T W with W = L^-1, over the matrix at `a`; exactly symmetric. */
function invert(a: usize, d: i32): void {
  for (let i = 0; i < d; i++) {
    const pivot = load<f64>(at(FACTOR, d, i, i));
    for (let j = 0; j < i; j++) {
      let t = 0.0;
      for (let k = j; k < i; k++) t += load<f64>(at(FACTOR, d, i, k)) * load<f64>(at(FACTOR_INVERSE, d, k, j));
      store<f64>(at(FACTOR_INVERSE, d, i, j), -t / pivot);
    }
    store<f64>(at(FACTOR_INVERSE, d, i, i), 1 / pivot);
  }
  for (let i = 0; i < d; i++) {
    for (let j = i; j < d; j++) {
      let t = 0.0;
      for (let k = j; k < d; k++) t += load<f64>(at(FACTOR_INVERSE, d, k, i)) * load<f64>(at(FACTOR_INVERSE, d, k, j));
      store<f64>(at(a, d, i, j), t);
      store<f64>(at(a, d, j, i), t);
    }
  }
}

function allFinite(p: usize, count: i32): bool {
  for (let i = 0; i < count; i++) if (!isFinite(load<f64>(p + (<usize>i << 3)))) return false;
  return true;
}

/**
 * Turns every arm's (A, b) in LINEAR into (A^-1, theta), in place. Returns -1, or the first arm
 * whose A is not positive definite (or whose inverse overflows); arms from it on are garbage.
 */
export function linearPrepare(armCount: i32, d: i32): i32 {
  const stride = <usize>(d * d + d) << 3;
  for (let arm = 0; arm < armCount; arm++) {
    const a = LINEAR + <usize>arm * stride;
    const b = a + (<usize>(d * d) << 3);
    if (!factor(a, d)) return arm;
    solve(b, d);
    invert(a, d);
    if (!allFinite(a, d * d + d)) return arm;
  }
  return -1;
}

/**
 * For the prepared arms in LINEAR and x in CONTEXT: the mean x^T theta to ARM_A and
 * spread * sqrt(x^T A^-1 x) to ARM_B (the quadratic form read as 0 if rounding took it below).
 * False when any of them is not finite (x or spread too large).
 */
export function linearScores(armCount: i32, d: i32, spread: f64): bool {
  const stride = <usize>(d * d + d) << 3;
  let finite = true;
  for (let arm = 0; arm < armCount; arm++) {
    const inverse = LINEAR + <usize>arm * stride;
    const theta = inverse + (<usize>(d * d) << 3);
    let mean = 0.0, form = 0.0;
    for (let r = 0; r < d; r++) {
      const xr = load<f64>(CONTEXT + (<usize>r << 3));
      mean += xr * load<f64>(theta + (<usize>r << 3));
      let t = 0.0;
      for (let c = 0; c < d; c++) t += load<f64>(at(inverse, d, r, c)) * load<f64>(CONTEXT + (<usize>c << 3));
      form += xr * t;
    }
    const width = spread * (form > 0 ? Math.sqrt(form) : 0);
    store<f64>(ARM_A + (<usize>arm << 3), mean);
    store<f64>(ARM_B + (<usize>arm << 3), width);
    finite = finite && isFinite(mean) && isFinite(width);
  }
  return finite;
}
