// The Bayesian view of a lift, GrowthBook's default engine (gbstats `EffectBayesianABTest`): the
// relative lift δ has a normal likelihood with the frequentist estimate as its mean and its
// delta-method standard error; with the default improper flat prior the posterior is that normal.
// A proper Gaussian prior N(m, v) on δ (gbstats' "proper prior", e.g. m = 0, v = 0.3²) combines by
// precision: 1/σ² = 1/SE² + 1/v, μ = σ²(δ̂/SE² + m/v).
//
//   chanceToBeatControl  P(δ > 0) = Φ(μ/σ)
//   expectedLoss         E[max(−δ, 0)] = σ·φ(μ/σ) − μ·Φ(−μ/σ): the relative lift one gives up on
//                        average by shipping the arm if it is in fact worse (gbstats' `risk` of the
//                        treatment)
import { normalUpperTail } from "./distributions.js";

export interface GaussianPrior {
  readonly mean: number;
  readonly variance: number;
}

export interface BayesianFigures {
  readonly chanceToBeatControl: number;
  readonly expectedLoss: number;
  /** The posterior of the relative lift. */
  readonly posteriorMean: number;
  readonly posteriorSd: number;
}

/** From the relative lift's estimate and standard error; undefined when nothing is known (SE 0, flat prior). */
export function bayesianView(estimate: number, se: number, prior?: GaussianPrior): BayesianFigures | undefined {
  const dataPrecision = se > 0 ? 1 / (se * se) : 0;
  const precision = dataPrecision + (prior === undefined ? 0 : 1 / prior.variance);
  if (precision === 0 || !Number.isFinite(precision)) return undefined;
  const mean = prior === undefined ? estimate : (estimate * dataPrecision + prior.mean / prior.variance) / precision;
  const sd = Math.sqrt(1 / precision);
  const z = mean / sd;
  const density = Math.exp(-(z * z) / 2) / Math.sqrt(2 * Math.PI);
  const expectedLoss = Math.max(0, sd * density - mean * normalUpperTail(z));
  return { chanceToBeatControl: normalUpperTail(-z), expectedLoss, posteriorMean: mean, posteriorSd: sd };
}
