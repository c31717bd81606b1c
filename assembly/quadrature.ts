// Exact win probabilities of Normal arms: P(arm i draws the greatest value), by adaptive
// Gauss–Kronrod quadrature over the value t every arm shares, rather than Monte Carlo:
//
//   P_i = ∫ f_i(t) Π_{j≠i} F_j(t) dt,   f_j, F_j: arm j's density and CDF (mean m_j, sd s_j)
//
// One pass integrates every arm at once: each node costs one normalCdf per arm, and the k
// integrands come from prefix and suffix products of the CDFs. docs/engine.md has the method,
// its edge cases and its accuracy; src/engine/reference-quadrature.ts is its twin.
import { ARM_A, ARM_B, ARM_OUT, MAX_ARMS } from "./layout";
import { lastDensity, normalCdf } from "./normal";

// Gauss–Kronrod G15/K31 (QUADPACK's qk31, Piessens et al. 1983): Kronrod nodes ±XGK[q] and 0
// with weights WGK; the 15-point Gauss rule uses the odd q and 0, with weights WG.
const XGK: usize = memory.data<f64>([
  0.998002298693397060285172840152271, 0.987992518020485428489565718586613, 0.967739075679139134257347978784337,
  0.937273392400705904307758947710209, 0.897264532344081900882509656454496, 0.848206583410427216200648320774217,
  0.790418501442465932967649294817947, 0.724417731360170047416186054613938, 0.650996741297416970533735895313275,
  0.570972172608538847537226737253911, 0.485081863640239680693655740232351, 0.394151347077563369897207370981045,
  0.299180007153168812166780024266389, 0.201194093997434522300628303394596, 0.101142066918717499027074231447392,
]);
const WGK: usize = memory.data<f64>([
  0.005377479872923348987792051430128, 0.015007947329316122538374763075807, 0.025460847326715320186874001019653,
  0.035346360791375846222037948478360, 0.044589751324764876608227299373280, 0.053481524690928087265343147239430,
  0.062009567800670640285139230960803, 0.069854121318728258709520077099147, 0.076849680757720378894432777482659,
  0.083080502823133021038289247286104, 0.088564443056211770647275443693774, 0.093126598170825321225486872747346,
  0.096642726983623678505179907627589, 0.099173598721791959332393173484603, 0.100769845523875595044946662617570,
  0.101330007014791549017374792767493,
]);
const WG: usize = memory.data<f64>([
  0.030753241996117268354628393577204, 0.070366047488108124709267416450667, 0.107159220467171935011869546685869,
  0.139570677926154314447804794511028, 0.166269205816993933553200860481209, 0.186161000015562211026800561866423,
  0.198431485327111576456118326443839, 0.202578241925561272880620199967519,
]);
const SIDE_NODES: i32 = 15;

/** Arms matter within Z sds of their mean: Φ(-8.5) < 1e-17. */
const Z: f64 = 8.5;
/** A panel is done when |K31 - G15| is at most this for every arm (the K31 error is far smaller). */
const PANEL_TOLERANCE: f64 = 1e-11;
/** Inputs the method takes: beyond them a sum could overflow. */
const MEAN_LIMIT: f64 = 1e300;
const SD_MAX: f64 = 1e300;
/** Smaller sds count as 0 (point masses), so that 1 / sd and the densities stay finite. */
const SD_MIN: f64 = 1e-300;
// Panels wait on a stack, left first. Halving from a width under 2^1001 reaches the spacing of
// doubles (2^-1074) within 2076 levels, and the stack never holds more than depth + 1 panels.
const STACK_PANELS: i32 = 2112;

const MEAN: usize = memory.data(MAX_ARMS << 3, 16); // less the pivot
const SD: usize = memory.data(MAX_ARMS << 3, 16); // 0 below SD_MIN
const INV_SD: usize = memory.data(MAX_ARMS << 3, 16);
const ACTIVE: usize = memory.data(MAX_ARMS << 2, 16); // arms that can still win in a panel
const CDF: usize = memory.data(MAX_ARMS << 3, 16); // per active arm, at one node
const DENSITY: usize = memory.data(MAX_ARMS << 3, 16);
const PREFIX: usize = memory.data(MAX_ARMS << 3, 16); // Π of CDFs of the active arms before it
const KRONROD: usize = memory.data(MAX_ARMS << 3, 16); // per active arm, the panel's K31 sum
const GAUSS: usize = memory.data(MAX_ARMS << 3, 16); // and its G15 sum
const STACK: usize = memory.data(STACK_PANELS << 4, 16);

@inline function f64At(base: usize, i: i32): f64 { return load<f64>(base + (<usize>i << 3)); }
@inline function setF64(base: usize, i: i32, x: f64): void { store<f64>(base + (<usize>i << 3), x); }
@inline function activeArm(n: i32): i32 { return load<i32>(ACTIVE + (<usize>n << 2)); }

/**
 * Each Normal(ARM_A[i], ARM_B[i]) arm's probability of the greatest draw, into ARM_OUT, summing
 * to 1. Ties between sd-0 arms go to the lowest index, as in thompsonGaussian. False, with
 * ARM_OUT undefined, when a |mean| or an sd exceeds 1e300 (or an sd is negative).
 */
export function gaussianWinProbabilities(armCount: i32): bool {
  let pivot = 0.0, pivotFrom = -Infinity, pointArm = -1, pointMean = -Infinity;
  for (let i = 0; i < armCount; i++) {
    const m = f64At(ARM_A, i), given = f64At(ARM_B, i);
    if (!(abs(m) <= MEAN_LIMIT) || !(given >= 0 && given <= SD_MAX)) return false;
    const s = given < SD_MIN ? 0 : given;
    setF64(SD, i, s);
    setF64(ARM_OUT, i, 0);
    if (s == 0) {
      if (m > pointMean) { pointArm = i; pointMean = m; } // strict: the lowest index keeps a tie
    } else if (m - Z * s > pivotFrom) {
      pivot = m;
      pivotFrom = m - Z * s;
    }
  }
  if (pivotFrom == -Infinity) { // point masses only
    setF64(ARM_OUT, pointArm, 1);
    return true;
  }
  // t is measured from the mean of the arm whose range starts highest, where the integration
  // starts: near there, differences of means are exact however large the means are.
  let from = -Infinity, to = -Infinity;
  for (let i = 0; i < armCount; i++) {
    const s = f64At(SD, i);
    if (s == 0) continue;
    const m = f64At(ARM_A, i) - pivot;
    setF64(MEAN, i, m);
    setF64(INV_SD, i, 1 / s);
    from = max(from, m - Z * s); // below, some arm's CDF is under Φ(-Z): nobody wins there
    to = max(to, m + Z * s); // above, every arm's density is spent
  }
  if (pointArm >= 0) {
    // The best point mass wins when every Normal arm draws below it; they win only above it.
    const point = pointMean - pivot;
    let p = 1.0;
    for (let j = 0; j < armCount; j++) if (f64At(SD, j) > 0) p *= normalCdf((point - f64At(MEAN, j)) * f64At(INV_SD, j));
    setF64(ARM_OUT, pointArm, p);
    from = max(from, point);
  }
  if (from < to) integrate(armCount, from, to);
  let total = 0.0;
  for (let i = 0; i < armCount; i++) total += f64At(ARM_OUT, i);
  for (let i = 0; i < armCount; i++) setF64(ARM_OUT, i, f64At(ARM_OUT, i) / total);
  return true;
}

/** Adds ∫ over [from, to] of every Normal arm's integrand to ARM_OUT, panel by panel. */
function integrate(armCount: i32, from: f64, to: f64): void {
  let depth = 1;
  store<f64>(STACK, from);
  store<f64>(STACK, to, 8);
  while (depth > 0) {
    depth--;
    const a = load<f64>(STACK + (<usize>depth << 4));
    const b = load<f64>(STACK + (<usize>depth << 4), 8);
    const w = b - a, h = w * 0.5;
    const n = panelSums(armCount, a, w);
    // Done when every arm's two rules agree (NaN never does) and the panel is no wider than
    // 2Z sds of any arm it reaches, so no narrow arm can hide between the nodes.
    let done = true;
    for (let q = 0; q < n; q++) {
      const j = activeArm(q);
      const s = f64At(SD, j);
      if (!(abs(f64At(KRONROD, q) - f64At(GAUSS, q)) * h <= PANEL_TOLERANCE)) done = false;
      if (w > 2 * Z * s && b > f64At(MEAN, j) - Z * s) done = false;
    }
    const c = a + h;
    if (done || !(a < c && c < b) || depth + 2 > STACK_PANELS) {
      for (let q = 0; q < n; q++) {
        const j = activeArm(q);
        setF64(ARM_OUT, j, f64At(ARM_OUT, j) + f64At(KRONROD, q) * h);
      }
      continue;
    }
    store<f64>(STACK + (<usize>depth << 4), c); // right half, taken second
    store<f64>(STACK + (<usize>depth << 4), b, 8);
    store<f64>(STACK + (<usize>(depth + 1) << 4), a); // left half, taken next
    store<f64>(STACK + (<usize>(depth + 1) << 4), c, 8);
    depth += 2;
  }
}

/**
 * The K31 and G15 sums (before scaling by the half-width) of every active arm over the panel
 * [a, a + w], into KRONROD and GAUSS; returns the number of active arms, listed in ACTIVE.
 * Arm j is active unless the panel starts Z sds above its mean (its CDF is then exactly 1).
 */
function panelSums(armCount: i32, a: f64, w: f64): i32 {
  let n = 0;
  for (let j = 0; j < armCount; j++) {
    const s = f64At(SD, j);
    if (s > 0 && a < f64At(MEAN, j) + Z * s) {
      store<i32>(ACTIVE + (<usize>n << 2), j);
      setF64(KRONROD, n, 0);
      setF64(GAUSS, n, 0);
      n++;
    }
  }
  addNode(n, a, w, 0.5, f64At(WGK, SIDE_NODES), f64At(WG, 7));
  for (let q = 0; q < SIDE_NODES; q++) {
    const x = f64At(XGK, q), wk = f64At(WGK, q);
    const wg = q & 1 ? f64At(WG, q >> 1) : 0;
    addNode(n, a, w, (1 - x) / 2, wk, wg);
    addNode(n, a, w, (1 + x) / 2, wk, wg);
  }
  return n;
}

/**
 * One node t = a + w·u: each active arm's integrand f_i(t) Π_{j≠i} F_j(t), weighted into the
 * sums. The standardized value is ((a - m) + w·u) / s rather than (t - m) / s: near a narrow arm
 * a - m is exact, so its density is sampled where the rule says, not a rounding of t away.
 */
function addNode(n: i32, a: f64, w: f64, u: f64, wk: f64, wg: f64): void {
  let product = 1.0;
  for (let q = 0; q < n; q++) {
    const j = activeArm(q);
    const inv = f64At(INV_SD, j);
    const cdf = normalCdf(((a - f64At(MEAN, j)) + w * u) * inv);
    setF64(CDF, q, cdf);
    setF64(DENSITY, q, lastDensity * inv);
    setF64(PREFIX, q, product);
    product *= cdf;
  }
  let suffix = 1.0;
  for (let q = n - 1; q >= 0; q--) {
    const g = f64At(DENSITY, q) * f64At(PREFIX, q) * suffix;
    setF64(KRONROD, q, f64At(KRONROD, q) + wk * g);
    setF64(GAUSS, q, f64At(GAUSS, q) + wg * g);
    suffix *= f64At(CDF, q);
  }
}
