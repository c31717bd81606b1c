// Delayed feedback (issue 13 §3), after Chapelle, "Modeling delayed feedback in display
// advertising" (KDD 2014): a decision whose window is still open has had only part of its chance to
// convert. Rewards arrive after a delay D; with D exponential of mean μ and truncated at the window
// W (a reward after W never counts), a decision of age a has shown its reward, if it has one, with
// probability G(a) = (1 − e^(−a/μ)) / (1 − e^(−W/μ)). Successes observed so far then average
// p · Σ G(aᵢ) over the arm's decisions, so the arm's conversion estimate divides by the effective
// trials n − Σ (1 − G(aᵢ)) instead of n. μ is learned from the delays observed (the mean delay of
// rewards within the window); decisions of one policy share it.
//
// The sum over open decisions is kept in O(1) per decision: with a fixed reference time T and μ,
// Σ (1 − G(aᵢ)) = (e^(−(t−T)/μ) · Σ e^((tᵢ−T)/μ) − N · e^(−W/μ)) / (1 − e^(−W/μ)), over the N
// decisions younger than W. Decisions are kept in time bins (W / BINS wide) only so that the ones
// leaving the window can be subtracted, and so that the sum can be rebuilt when μ moves.

/** Time bins per window: bounds the memory per arm (two numbers a bin). */
export const BINS = 4096;
/** Observed delays needed before μ is trusted; until then no correction (the naive count). */
export const MIN_DELAY_OBSERVATIONS = 10;
/** μ may drift this much (relative) before the sum is rebuilt with it. */
const MU_TOLERANCE = 0.01;
/** Rebase the reference time before e^((t−T)/μ) grows past e^REBASE. */
const REBASE = 300;

/** What the observed delays say: [count, Σ delay, Σ delay²], kept like an arm's statistics. */
export type DelayStats = Float64Array;

export function emptyDelayStats(): DelayStats {
  return new Float64Array(3);
}

export function observeDelay(stats: DelayStats, delay: number): void {
  stats[0]! += 1;
  stats[1]! += delay;
  stats[2]! += delay * delay;
}

/** The learned mean delay, or undefined while too few rewards have been seen to tell. */
export function meanDelay(stats: DelayStats | undefined): number | undefined {
  if (!stats || stats[0]! < MIN_DELAY_OBSERVATIONS) return undefined;
  return Math.max(stats[1]! / stats[0]!, Number.MIN_VALUE);
}

/** One arm's decisions still inside their window, as time bins. */
export class OpenTrials {
  private readonly binStart: number[] = [];
  private readonly binCount: number[] = [];
  private head = 0;
  /** The running sum for (mu, reference): Σ count · e^((t − reference)/mu), and the decisions in it. */
  private mu = 0;
  private reference = 0;
  private weighted = 0;
  private open = 0;

  constructor(readonly windowMs: number) {}

  /** A decision (or `count` of them) made at `atMs`. */
  add(atMs: number, count = 1): void {
    const width = Math.max(1, this.windowMs / BINS);
    const start = Math.floor(atMs / width) * width;
    const last = this.binStart.length - 1;
    if (last >= this.head && this.binStart[last] === start) this.binCount[last]! += count;
    else if (last < this.head || this.binStart[last]! < start) {
      this.binStart.push(start);
      this.binCount.push(count);
    } else {
      this.insertEarlier(start, count); // a decision read out of time order: rare
    }
    if (this.mu > 0) {
      this.weighted += count * Math.exp((start - this.reference) / this.mu);
      this.open += count;
    }
  }

  /** Σ (1 − G(age)) over the decisions younger than the window: the trials whose outcome is still hidden. */
  unobserved(nowMs: number, mu: number | undefined): number {
    this.expire(nowMs);
    if (mu === undefined || this.head === this.binStart.length) return 0;
    if (Math.abs(mu - this.mu) > MU_TOLERANCE * this.mu || (nowMs - this.reference) / mu > REBASE) this.rebuild(nowMs, mu);
    const tail = Math.exp(-this.windowMs / this.mu);
    const hidden = (Math.exp(-(nowMs - this.reference) / this.mu) * this.weighted - this.open * tail) / (1 - tail);
    return Math.min(this.open, Math.max(0, hidden));
  }

  /** The bins still inside the window at `nowMs`, as [start, count]: what a learning server publishes for the others. */
  *bins(nowMs: number): Iterable<readonly [number, number]> {
    this.expire(nowMs);
    for (let i = this.head; i < this.binStart.length; i++) yield [this.binStart[i]!, this.binCount[i]!];
  }

  /** bins(), appended to two arrays: no object per bin (a publication reads thousands a second). */
  binsInto(nowMs: number, starts: number[], counts: number[]): void {
    this.expire(nowMs);
    for (let i = this.head; i < this.binStart.length; i++) {
      starts.push(this.binStart[i]!);
      counts.push(this.binCount[i]!);
    }
  }

  /** Bins, for tests and memory accounting. */
  get size(): number {
    return this.binStart.length - this.head;
  }

  private expire(nowMs: number): void {
    const oldest = nowMs - this.windowMs;
    while (this.head < this.binStart.length && this.binStart[this.head]! <= oldest) {
      if (this.mu > 0) {
        this.weighted -= this.binCount[this.head]! * Math.exp((this.binStart[this.head]! - this.reference) / this.mu);
        this.open -= this.binCount[this.head]!;
      }
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.binStart.length) {
      this.binStart.splice(0, this.head);
      this.binCount.splice(0, this.head);
      this.head = 0;
    }
  }

  private rebuild(nowMs: number, mu: number): void {
    this.mu = mu;
    this.reference = nowMs;
    this.weighted = 0;
    this.open = 0;
    for (let i = this.head; i < this.binStart.length; i++) {
      this.weighted += this.binCount[i]! * Math.exp((this.binStart[i]! - nowMs) / mu);
      this.open += this.binCount[i]!;
    }
  }

  private insertEarlier(start: number, count: number): void {
    let i = this.binStart.length - 1;
    while (i >= this.head && this.binStart[i]! > start) i--;
    if (i >= this.head && this.binStart[i] === start) this.binCount[i]! += count;
    else {
      this.binStart.splice(i + 1, 0, start);
      this.binCount.splice(i + 1, 0, count);
    }
  }
}
