// The open-window bookkeeping of delay.ts against the sum it stands for, computed decision by
// decision: Σ (1 − G(age)) with G the exponential delay CDF truncated at the window.
import { describe, expect, it } from "vitest";
import { MIN_DELAY_OBSERVATIONS, OpenTrials, emptyDelayStats, meanDelay, observeDelay } from "../../src/adaptive/delay.js";

const WINDOW = 100_000;

function hiddenDirect(times: readonly number[], now: number, mu: number): number {
  const tail = Math.exp(-WINDOW / mu);
  let sum = 0;
  for (const t of times) {
    const age = now - t;
    if (age >= WINDOW || age < 0) continue;
    const g = (1 - Math.exp(-age / mu)) / (1 - tail);
    sum += 1 - g;
  }
  return sum;
}

/** A seeded generator, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe("OpenTrials", () => {
  it("matches the decision-by-decision sum as time passes, decisions leave the window and μ moves", () => {
    const random = lcg(7);
    const open = new OpenTrials(WINDOW);
    const times: number[] = [];
    let now = 0;
    let mu = 5_000;
    for (let step = 0; step < 4000; step++) {
      now += Math.floor(random() * 200);
      const count = Math.floor(random() * 3);
      for (let i = 0; i < count; i++) {
        const at = now - Math.floor(random() * 50); // slightly out of order, as batches arrive
        open.add(at);
        times.push(Math.floor(at / (WINDOW / 4096)) * (WINDOW / 4096)); // the bin's time
      }
      if (step % 500 === 499) mu *= 1.5; // the learned mean delay drifts
      if (step % 50 === 0) {
        const expected = hiddenDirect(times, now, mu);
        expect(open.unobserved(now, mu)).toBeCloseTo(expected, 6);
      }
    }
    expect(open.size).toBeLessThanOrEqual(4097);
  });

  it("hides nothing without a delay model, and everything of a decision made this instant", () => {
    const open = new OpenTrials(WINDOW);
    open.add(1000);
    expect(open.unobserved(1000, undefined)).toBe(0);
    expect(open.unobserved(1000, 10_000)).toBeCloseTo(1, 2); // up to the bin width (window / 4096)
    expect(open.unobserved(1000 + WINDOW, 10_000)).toBe(0); // the window closed: fully observed
  });
});

describe("the delay model", () => {
  it("needs a few observed delays before it is trusted, then is their mean", () => {
    const stats = emptyDelayStats();
    for (let i = 0; i < MIN_DELAY_OBSERVATIONS - 1; i++) observeDelay(stats, 1000 * (i + 1));
    expect(meanDelay(stats)).toBeUndefined();
    observeDelay(stats, 10_000);
    expect(meanDelay(stats)).toBe(5_500);
  });
});
