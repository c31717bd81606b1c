// When rewards arrive (issue 13 §5): at once, or after a delay drawn per reward, exponential with a
// mean of 1,000 rounds or lognormal with the same median (heavier tail); a reward later than the
// window (10,000 rounds) never counts, as on the server.
import { normal } from "./random.js";

export interface Feedback {
  readonly key: "immediate" | "exponential" | "lognormal";
  readonly label: string;
  /** The reward's delay in rounds (0: observed before the next decision). */
  delay(random: () => number): number;
}

export const MEAN_DELAY = 1000;
export const WINDOW_ROUNDS = 10_000;
/** The lognormal's spread; its median equals the exponential's (1,000 · ln 2 ≈ 693 rounds). */
export const LOGNORMAL_SIGMA = 1.5;
const MEDIAN = MEAN_DELAY * Math.LN2;

export const IMMEDIATE: Feedback = { key: "immediate", label: "rewards at once", delay: () => 0 };
export const EXPONENTIAL: Feedback = {
  key: "exponential",
  label: `exponential delays (mean ${MEAN_DELAY.toLocaleString("en-US")} rounds)`,
  delay: (random) => Math.round(-MEAN_DELAY * Math.log(1 - random())),
};
export const LOGNORMAL: Feedback = {
  key: "lognormal",
  label: `lognormal delays (median ${Math.round(MEDIAN)} rounds, σ = ${LOGNORMAL_SIGMA})`,
  delay: (random) => Math.round(MEDIAN * Math.exp(LOGNORMAL_SIGMA * normal(random))),
};

export const FEEDBACKS: readonly Feedback[] = [IMMEDIATE, EXPONENTIAL, LOGNORMAL];
