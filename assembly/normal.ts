// The standard normal CDF and density, for exact Gaussian win probabilities. Only + - * /, trunc
// and comparisons, never the runtime's Math.exp: the TypeScript reference (src/engine/
// reference-quadrature.ts) runs the same operations in the same order and agrees to the bit.

// fdlibm's e_exp.c (Sun Microsystems, 1993): x = k ln2 + r, |r| <= ln2 / 2, and a degree-5
// Remez fit of r (e^r + 1) / (e^r - 1); under 1 ulp.
const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const INV_LN2: f64 = 1.44269504088896338700e+00;
const P1: f64 = 1.66666666666666019037e-01;
const P2: f64 = -2.77777777770155933842e-03;
const P3: f64 = 6.61375632143793436117e-05;
const P4: f64 = -1.65339022054652515390e-06;
const P5: f64 = 4.13813679705723846039e-08;

/** e^x for x <= 0; 0 below -708 (where e^x is under 2^-1021, far below anything summed here). */
function expNegative(x: f64): f64 {
  if (x < -708) return 0;
  let hi = x, lo = 0.0, k = 0;
  if (x < -0.34657359027997264) { // |x| > ln2 / 2: reduce
    k = <i32>(INV_LN2 * x - 0.5);
    hi = x - <f64>k * LN2_HI;
    lo = <f64>k * LN2_LO;
  }
  const r = hi - lo;
  const t = r * r;
  const c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  const y = 1 - ((lo - (r * c) / (2 - c)) - hi);
  return k == 0 ? y : y * reinterpret<f64>(<u64>(1023 + k) << 52);
}

// exp(-y^2 / 2) = exp(-ysq^2 / 2) * exp(-del / 2) with ysq = trunc(16 y) / 16 and
// del = (y - ysq)(y + ysq), as Cody does to keep y^2's rounding out of the exponent. The first
// factor takes 617 values (y < 38.5, beyond which it underflows), tabulated at instantiation.
const KERNEL_STEPS: i32 = 617;
const KERNEL_LIMIT: f64 = 38.5;
const KERNEL: usize = memory.data(KERNEL_STEPS << 3, 16);

function buildKernel(): void {
  for (let j = 0; j < KERNEL_STEPS; j++) {
    const ysq = <f64>j / 16;
    store<f64>(KERNEL + (<usize>j << 3), expNegative(-ysq * ysq * 0.5));
  }
}
buildKernel();

// W. J. Cody's rational Chebyshev approximations for the normal CDF (ACM TOMS 715, "ANORM"),
// as in R's pnorm.c: |x| <= 0.67448975, up to sqrt(32), and beyond. About 1e-16 relative.
const A0: f64 = 2.2352520354606839287, A1: f64 = 161.02823106855587881, A2: f64 = 1067.6894854603709582;
const A3: f64 = 18154.981253343561249, A4: f64 = 0.065682337918207449113;
const B0: f64 = 47.20258190468824187, B1: f64 = 976.09855173777669322, B2: f64 = 10260.932208618978205;
const B3: f64 = 45507.789335026729956;
const C0: f64 = 0.39894151208813466764, C1: f64 = 8.8831497943883759412, C2: f64 = 93.506656132177855979;
const C3: f64 = 597.27027639480026226, C4: f64 = 2494.5375852903726711, C5: f64 = 6848.1904505362823326;
const C6: f64 = 11602.651437647350124, C7: f64 = 9842.7148383839780218, C8: f64 = 1.0765576773720192317e-8;
const D0: f64 = 22.266688044328115691, D1: f64 = 235.38790178262499861, D2: f64 = 1519.377599407554805;
const D3: f64 = 6485.558298266760755, D4: f64 = 18615.571640885098091, D5: f64 = 34900.952721145977266;
const D6: f64 = 38912.003286093271411, D7: f64 = 19685.429676859990727;
const Q_P0: f64 = 0.21589853405795699, Q_P1: f64 = 0.1274011611602473639, Q_P2: f64 = 0.022235277870649807;
const Q_P3: f64 = 0.001421619193227893466, Q_P4: f64 = 2.9112874951168792e-5, Q_P5: f64 = 0.02307344176494017303;
const Q0: f64 = 1.28426009614491121, Q1: f64 = 0.468238212480865118, Q2: f64 = 0.0659881378689285515;
const Q3: f64 = 0.00378239633202758244, Q4: f64 = 7.29751555083966205e-5;
const SQRT_32: f64 = 5.656854249492380195206754896838;
const INV_SQRT_2PI: f64 = 0.398942280401432677939946059934;
const HALF_EPSILON: f64 = 1.1102230246251565e-16;

/** The density φ(x) of the last normalCdf call: both come from one exp. */
export let lastDensity: f64 = 0;

/** Φ(x), the standard normal CDF; sets lastDensity to φ(x). x must not be NaN. */
export function normalCdf(x: f64): f64 {
  const y = abs(x);
  if (y >= KERNEL_LIMIT) {
    lastDensity = 0;
    return x > 0 ? 1 : 0;
  }
  const ysq = Math.trunc(y * 16) / 16;
  const del = (y - ysq) * (y + ysq);
  const kernel = load<f64>(KERNEL + (<usize>(<i32>(ysq * 16)) << 3)) * expNegative(-del * 0.5);
  lastDensity = kernel * INV_SQRT_2PI;
  if (y <= 0.67448975) {
    let num = 0.0, den = 0.0;
    if (y > HALF_EPSILON) {
      const xsq = x * x;
      num = A4 * xsq;
      den = xsq;
      num = (num + A0) * xsq; den = (den + B0) * xsq;
      num = (num + A1) * xsq; den = (den + B1) * xsq;
      num = (num + A2) * xsq; den = (den + B2) * xsq;
    }
    return 0.5 + x * (num + A3) / (den + B3);
  }
  if (x >= 8.2924) return 1;
  if (x <= -37.5193) return 0;
  let tail: f64;
  if (y <= SQRT_32) {
    let num = C8 * y, den = y;
    num = (num + C0) * y; den = (den + D0) * y;
    num = (num + C1) * y; den = (den + D1) * y;
    num = (num + C2) * y; den = (den + D2) * y;
    num = (num + C3) * y; den = (den + D3) * y;
    num = (num + C4) * y; den = (den + D4) * y;
    num = (num + C5) * y; den = (den + D5) * y;
    num = (num + C6) * y; den = (den + D6) * y;
    tail = (num + C7) / (den + D7);
  } else {
    const xsq = 1 / (x * x);
    let num = Q_P5 * xsq, den = xsq;
    num = (num + Q_P0) * xsq; den = (den + Q0) * xsq;
    num = (num + Q_P1) * xsq; den = (den + Q1) * xsq;
    num = (num + Q_P2) * xsq; den = (den + Q2) * xsq;
    num = (num + Q_P3) * xsq; den = (den + Q3) * xsq;
    tail = (INV_SQRT_2PI - xsq * (num + Q_P4) / (den + Q4)) / y;
  }
  const cum = kernel * tail;
  return x > 0 ? 1 - cum : cum;
}
