// Contextual arms prepared for decisions. Each arm's ridge-regression state (A, b) is inverted
// once per state version and the host keeps the result, so a decision costs two dot products
// per arm and never an inverse.
import { checkArray, checkCount, describe } from "./checks.js";
import { isBuiltTable } from "./tables.js";

/** One arm's state: A = λI + Σ x xᵀ (d × d, row-major, symmetric), b = Σ r x (d values). */
export interface LinearArmState {
  readonly a: ArrayLike<number>;
  readonly b: ArrayLike<number>;
}

export interface LinearCapacity {
  readonly maxArms: number;
  /** The largest feature count d. */
  readonly maxDimension: number;
  /** f64 values the engine holds for all arms of one decision: d * d + d per arm. */
  readonly linearValues: number;
}

/**
 * Arms' A⁻¹ and θ as the engine lays them out: per arm, A⁻¹ (d × d, row-major) then θ (d).
 * Made by engine.prepareLinearArms only; treat as read-only (the engine keeps the last arms it
 * used loaded and does not look for changes).
 */
export class LinearArms {
  constructor(
    readonly armCount: number,
    readonly dimension: number,
    readonly values: Float64Array,
  ) {}

  /** Arm i's A⁻¹, row-major: a view into `values`. */
  inverse(arm: number): Float64Array {
    const start = this.blockStart(arm);
    return this.values.subarray(start, start + this.dimension * this.dimension);
  }

  /** Arm i's θ = A⁻¹ b: a view into `values`. */
  theta(arm: number): Float64Array {
    const start = this.blockStart(arm) + this.dimension * this.dimension;
    return this.values.subarray(start, start + this.dimension);
  }

  private blockStart(arm: number): number {
    if (!Number.isInteger(arm) || arm < 0 || arm >= this.armCount) {
      throw new RangeError(`arm must be an integer from 0 to ${this.armCount - 1}, got ${describe(arm)}`);
    }
    return arm * (this.dimension * this.dimension + this.dimension);
  }
}

export function isLinearArms(arms: unknown): arms is LinearArms {
  return arms instanceof LinearArms && isBuiltTable(arms);
}

/** How many arms of dimension d one decision can hold. */
export function maxLinearArms(capacity: LinearCapacity, dimension: number): number {
  return Math.min(capacity.maxArms, Math.floor(capacity.linearValues / (dimension * dimension + dimension)));
}

/** Checked (A, b) of every arm, packed in the engine's layout. */
export function packLinearArms(arms: unknown, dimension: unknown, capacity: LinearCapacity): { values: Float64Array; armCount: number; dimension: number } {
  const d = checkCount("dimension", dimension, capacity.maxDimension);
  if (!Array.isArray(arms)) throw new TypeError(`arms must be an array of { a, b }, got ${describe(arms)}`);
  const most = maxLinearArms(capacity, d);
  if (arms.length === 0) throw new RangeError("arms must list at least one arm");
  if (arms.length > most) throw new RangeError(`arms lists ${arms.length} arms; at most ${most} at dimension ${d}`);
  const stride = d * d + d;
  const values = new Float64Array(arms.length * stride);
  arms.forEach((arm: unknown, i) => {
    const { a, b } = (arm ?? {}) as Partial<LinearArmState>;
    values.set(checkVector(`arms[${i}].a`, a, d * d), i * stride);
    values.set(checkVector(`arms[${i}].b`, b, d), i * stride + d * d);
    checkSymmetric(`arms[${i}].a`, values.subarray(i * stride, i * stride + d * d), d);
  });
  return { values, armCount: arms.length, dimension: d };
}

/** A context vector: d finite numbers. A plain loop: it runs on every decision. */
export function checkContext(x: unknown, dimension: number): ArrayLike<number> {
  return checkVector("x", x, dimension);
}

function checkVector(name: string, raw: unknown, length: number): ArrayLike<number> {
  const values = checkArray(name, raw);
  if (values.length !== length) throw new RangeError(`${name} must have ${length} values, got ${values.length}`);
  for (let i = 0; i < length; i++) {
    const v = values[i];
    if (typeof v !== "number" || !Number.isFinite(v)) throw new RangeError(`${name}[${i}] must be a finite number, got ${describe(v)}`);
  }
  return values;
}

/** Exactly symmetric: A built as λI + Σ x xᵀ is, since x_i x_j == x_j x_i in floating point. */
function checkSymmetric(name: string, a: Float64Array, d: number): void {
  for (let i = 0; i < d; i++) {
    for (let j = 0; j < i; j++) {
      if (a[i * d + j] !== a[j * d + i]) throw new RangeError(`${name} must be symmetric; entries (${i}, ${j}) and (${j}, ${i}) differ`);
    }
  }
}
