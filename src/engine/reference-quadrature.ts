// Reference of the engine's exact Gaussian win probabilities (assembly/normal.ts and
// assembly/quadrature.ts), written from docs/engine.md. It performs the same IEEE operations in
// the same order, and uses its own exp rather than Math.exp, so the wasm agrees with it to the bit.

// ---------------------------------------------------------------------------------------
// e^x for x <= 0: fdlibm's e_exp.c

const LN2_HI = 6.93147180369123816490e-01;
const LN2_LO = 1.90821492927058770002e-10;
const INV_LN2 = 1.44269504088896338700e+00;
const [P1, P2, P3, P4, P5] = [
  1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05, -1.65339022054652515390e-06,
  4.13813679705723846039e-08,
];
const powerBits = new DataView(new ArrayBuffer(8));

/** 2^k for -1022 <= k <= 1023, from its bits. */
function powerOfTwo(k: number): number {
  powerBits.setUint32(0, (1023 + k) << 20);
  powerBits.setUint32(4, 0);
  return powerBits.getFloat64(0);
}

/** e^x for x <= 0, under 1 ulp; 0 below -708. */
export function expNegative(x: number): number {
  if (x < -708) return 0;
  let hi = x, lo = 0, k = 0;
  if (x < -0.34657359027997264) {
    k = Math.trunc(INV_LN2 * x - 0.5);
    hi = x - k * LN2_HI;
    lo = k * LN2_LO;
  }
  const r = hi - lo;
  const t = r * r;
  const c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  const y = 1 - ((lo - (r * c) / (2 - c)) - hi);
  return k === 0 ? y : y * powerOfTwo(k);
}

// ---------------------------------------------------------------------------------------
// Φ and φ: W. J. Cody's ANORM (ACM TOMS 715), as R's pnorm.c

const KERNEL_LIMIT = 38.5;
/** exp(-(j/16)^2 / 2) for j = 0 .. 616. */
const KERNEL = Float64Array.from({ length: 617 }, (_, j) => {
  const ysq = j / 16;
  return expNegative(-ysq * ysq * 0.5);
});
const A = [2.2352520354606839287, 161.02823106855587881, 1067.6894854603709582, 18154.981253343561249, 0.065682337918207449113] as const;
const B = [47.20258190468824187, 976.09855173777669322, 10260.932208618978205, 45507.789335026729956] as const;
const C = [
  0.39894151208813466764, 8.8831497943883759412, 93.506656132177855979, 597.27027639480026226, 2494.5375852903726711,
  6848.1904505362823326, 11602.651437647350124, 9842.7148383839780218, 1.0765576773720192317e-8,
] as const;
const D = [
  22.266688044328115691, 235.38790178262499861, 1519.377599407554805, 6485.558298266760755, 18615.571640885098091,
  34900.952721145977266, 38912.003286093271411, 19685.429676859990727,
] as const;
const P = [0.21589853405795699, 0.1274011611602473639, 0.022235277870649807, 0.001421619193227893466, 2.9112874951168792e-5, 0.02307344176494017303] as const;
const Q = [1.28426009614491121, 0.468238212480865118, 0.0659881378689285515, 0.00378239633202758244, 7.29751555083966205e-5] as const;
const SQRT_32 = 5.656854249492380195206754896838;
const INV_SQRT_2PI = 0.398942280401432677939946059934;
const HALF_EPSILON = 1.1102230246251565e-16;

/** Φ(x) and φ(x), from one exp. */
export function normalCdfDensity(x: number): { cdf: number; density: number } {
  const y = Math.abs(x);
  if (y >= KERNEL_LIMIT) return { cdf: x > 0 ? 1 : 0, density: 0 };
  const ysq = Math.trunc(y * 16) / 16;
  const del = (y - ysq) * (y + ysq);
  const kernel = KERNEL[ysq * 16]! * expNegative(-del * 0.5);
  const density = kernel * INV_SQRT_2PI;
  if (y <= 0.67448975) {
    let num = 0, den = 0;
    if (y > HALF_EPSILON) {
      const xsq = x * x;
      num = A[4] * xsq;
      den = xsq;
      for (let i = 0; i < 3; i++) {
        num = (num + A[i]!) * xsq;
        den = (den + B[i]!) * xsq;
      }
    }
    return { cdf: 0.5 + x * (num + A[3]) / (den + B[3]), density };
  }
  if (x >= 8.2924) return { cdf: 1, density };
  if (x <= -37.5193) return { cdf: 0, density };
  let tail: number;
  if (y <= SQRT_32) {
    let num = C[8] * y, den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + C[i]!) * y;
      den = (den + D[i]!) * y;
    }
    tail = (num + C[7]) / (den + D[7]);
  } else {
    const xsq = 1 / (x * x);
    let num = P[5] * xsq, den = xsq;
    for (let i = 0; i < 4; i++) {
      num = (num + P[i]!) * xsq;
      den = (den + Q[i]!) * xsq;
    }
    tail = (INV_SQRT_2PI - xsq * (num + P[4]) / (den + Q[4])) / y;
  }
  const cum = kernel * tail;
  return { cdf: x > 0 ? 1 - cum : cum, density };
}

export function normalCdf(x: number): number {
  return normalCdfDensity(x).cdf;
}

// ---------------------------------------------------------------------------------------
// Win probabilities: adaptive G15/K31 over the shared value t

/** QUADPACK's qk31: Kronrod nodes ±xgk[q] and 0 (weights wgk, the centre's last); Gauss: odd q and 0. */
export const GAUSS_KRONROD_31 = {
  xgk: [
    0.998002298693397060285172840152271, 0.987992518020485428489565718586613, 0.967739075679139134257347978784337,
    0.937273392400705904307758947710209, 0.897264532344081900882509656454496, 0.848206583410427216200648320774217,
    0.790418501442465932967649294817947, 0.724417731360170047416186054613938, 0.650996741297416970533735895313275,
    0.570972172608538847537226737253911, 0.485081863640239680693655740232351, 0.394151347077563369897207370981045,
    0.299180007153168812166780024266389, 0.201194093997434522300628303394596, 0.101142066918717499027074231447392,
  ],
  wgk: [
    0.005377479872923348987792051430128, 0.015007947329316122538374763075807, 0.025460847326715320186874001019653,
    0.035346360791375846222037948478360, 0.044589751324764876608227299373280, 0.053481524690928087265343147239430,
    0.062009567800670640285139230960803, 0.069854121318728258709520077099147, 0.076849680757720378894432777482659,
    0.083080502823133021038289247286104, 0.088564443056211770647275443693774, 0.093126598170825321225486872747346,
    0.096642726983623678505179907627589, 0.099173598721791959332393173484603, 0.100769845523875595044946662617570,
    0.101330007014791549017374792767493,
  ],
  wg: [
    0.030753241996117268354628393577204, 0.070366047488108124709267416450667, 0.107159220467171935011869546685869,
    0.139570677926154314447804794511028, 0.166269205816993933553200860481209, 0.186161000015562211026800561866423,
    0.198431485327111576456118326443839, 0.202578241925561272880620199967519,
  ],
} as const;
const { xgk: XGK, wgk: WGK, wg: WG } = GAUSS_KRONROD_31;

const Z = 8.5;
const PANEL_TOLERANCE = 1e-11;
const SD_MIN = 1e-300;

interface Arms {
  /** Less the pivot. */
  mean: number[];
  /** 0 below SD_MIN. */
  sd: number[];
  invSd: number[];
}

/**
 * Each Normal(mean[i], sd[i]) arm's probability of the greatest draw; sd-0 arms (and sds below
 * 1e-300) are point masses, the lowest index winning their ties. Takes |mean|, sd <= 1e300.
 */
export function gaussianWinProbabilities(mean: ArrayLike<number>, givenSd: ArrayLike<number>): number[] {
  const k = mean.length;
  const sd = Array.from(givenSd, (s) => (s < SD_MIN ? 0 : s));
  const out = new Array<number>(k).fill(0);
  let pivot = 0, pivotFrom = -Infinity, pointArm = -1, pointMean = -Infinity;
  for (let i = 0; i < k; i++) {
    const m = mean[i]!, s = sd[i]!;
    if (s === 0) {
      if (m > pointMean) [pointArm, pointMean] = [i, m];
    } else if (m - Z * s > pivotFrom) {
      [pivot, pivotFrom] = [m, m - Z * s];
    }
  }
  if (pivotFrom === -Infinity) {
    out[pointArm] = 1;
    return out;
  }
  // Means measured from the pivot: the mean of the arm whose range starts highest.
  const arms: Arms = { mean: Array.from(mean, (m) => m - pivot), sd, invSd: Array.from(sd, (s) => (s > 0 ? 1 / s : 0)) };
  let from = -Infinity, to = -Infinity;
  for (let i = 0; i < k; i++) {
    const s = sd[i]!;
    if (s === 0) continue;
    from = Math.max(from, arms.mean[i]! - Z * s);
    to = Math.max(to, arms.mean[i]! + Z * s);
  }
  if (pointArm >= 0) {
    const point = pointMean - pivot;
    let p = 1;
    for (let j = 0; j < k; j++) if (sd[j]! > 0) p *= normalCdf((point - arms.mean[j]!) * arms.invSd[j]!);
    out[pointArm] = p;
    from = Math.max(from, point);
  }
  if (from < to) integrate(arms, out, from, to);
  let total = 0;
  for (let i = 0; i < k; i++) total += out[i]!;
  return out.map((p) => p / total);
}

/** Depth-first over panels, left first: the engine's order, so the sums round alike. */
function integrate(arms: Arms, out: number[], from: number, to: number): void {
  const stack: Array<[number, number]> = [[from, to]];
  for (let panel = stack.pop(); panel !== undefined; panel = stack.pop()) {
    const [a, b] = panel;
    const w = b - a, h = w * 0.5;
    const { active, kronrod, gauss } = panelSums(arms, a, w);
    let done = true;
    active.forEach((j, q) => {
      const s = arms.sd[j]!;
      if (!(Math.abs(kronrod[q]! - gauss[q]!) * h <= PANEL_TOLERANCE)) done = false;
      if (w > 2 * Z * s && b > arms.mean[j]! - Z * s) done = false;
    });
    const c = a + h;
    if (done || !(a < c && c < b)) active.forEach((j, q) => (out[j] = out[j]! + kronrod[q]! * h));
    else stack.push([c, b], [a, c]);
  }
}

function panelSums(arms: Arms, a: number, w: number): { active: number[]; kronrod: number[]; gauss: number[] } {
  const active: number[] = [];
  for (let j = 0; j < arms.mean.length; j++) {
    const s = arms.sd[j]!;
    if (s > 0 && a < arms.mean[j]! + Z * s) active.push(j);
  }
  const kronrod = active.map(() => 0);
  const gauss = active.map(() => 0);
  const node = (u: number, wk: number, wg: number) => {
    const cdf: number[] = [], density: number[] = [], prefix: number[] = [];
    let product = 1;
    for (const j of active) {
      const inv = arms.invSd[j]!;
      const value = normalCdfDensity(((a - arms.mean[j]!) + w * u) * inv);
      cdf.push(value.cdf);
      density.push(value.density * inv);
      prefix.push(product);
      product *= value.cdf;
    }
    let suffix = 1;
    for (let q = active.length - 1; q >= 0; q--) {
      const g = density[q]! * prefix[q]! * suffix;
      kronrod[q] = kronrod[q]! + wk * g;
      gauss[q] = gauss[q]! + wg * g;
      suffix *= cdf[q]!;
    }
  };
  node(0.5, WGK[15], WG[7]);
  for (let q = 0; q < XGK.length; q++) {
    const wg = q & 1 ? WG[q >> 1]! : 0;
    node((1 - XGK[q]!) / 2, WGK[q]!, wg);
    node((1 + XGK[q]!) / 2, WGK[q]!, wg);
  }
  return { active, kronrod, gauss };
}
