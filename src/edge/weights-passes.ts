// The learner object's publication of learned weights into bundles: the publisher `vane serve`
// runs (adaptive/publisher.ts: the same threshold, the same interval read from bundle history,
// each version marked the learner's), passed the object's own learned state. A pass follows
// learning at most every `everyMs`, and comes again while a project waits out the interval since
// the learner's last publication for it: a Durable Object runs no timers between its events, so
// the object sets its alarm for the time asked.
import { DEFAULT_PUBLISH_INTERVAL_MS, DEFAULT_WEIGHT_THRESHOLD, type PublisherOptions, WeightsPublisher } from "../adaptive/publisher.js";
import { type NumberVar, numberVar } from "./vars.js";

/** The Worker's variables for it, named after `vane serve`'s options (--weights-every, --weights-threshold, --weights-min-minutes). */
export interface WeightsVars {
  readonly VANE_WEIGHTS_EVERY_MS?: string;
  readonly VANE_WEIGHTS_THRESHOLD?: string;
  readonly VANE_WEIGHTS_MIN_MINUTES?: string;
}

export interface WeightsSettings {
  readonly everyMs: number;
  readonly threshold: number;
  readonly minIntervalMs: number;
}

/** `vane serve`'s default: weights are recomputed every minute. */
export const DEFAULT_WEIGHTS_EVERY_MS = 60_000;
const MINUTE_MS = 60_000;
const MAX_MINUTES = 7 * 24 * 60;

export function weightsSettings(vars: WeightsVars): WeightsSettings {
  const read = (name: keyof WeightsVars, rule: NumberVar) => numberVar(vars[name], name, rule);
  const everyMs = read("VANE_WEIGHTS_EVERY_MS", { fallback: DEFAULT_WEIGHTS_EVERY_MS, valid: (n) => Number.isSafeInteger(n) && n >= 0, what: "a whole number of milliseconds" });
  const threshold = read("VANE_WEIGHTS_THRESHOLD", { fallback: DEFAULT_WEIGHT_THRESHOLD, valid: (n) => n >= 0 && n <= 1, what: "a number from 0 to 1" });
  const minutes = read("VANE_WEIGHTS_MIN_MINUTES", { fallback: DEFAULT_PUBLISH_INTERVAL_MS / MINUTE_MS, valid: (n) => n >= 0 && n <= MAX_MINUTES, what: `a number of minutes from 0 to ${MAX_MINUTES}` });
  return { everyMs, threshold, minIntervalMs: Math.round(minutes * MINUTE_MS) };
}

/** A pass owed later is asked for no sooner than this: `everyMs` may be 0 (tests), an alarm loop may not. */
const LEAST_WAIT_MS = 1_000;

export class WeightsPasses {
  private readonly publisher: WeightsPublisher;
  private readonly now: () => number;
  /** Starts at the object's start: the first pass comes `everyMs` later, as `vane serve`'s first does after it starts. */
  private lastPass: number;

  constructor(
    options: Omit<PublisherOptions, "threshold" | "minIntervalMs">,
    private readonly settings: WeightsSettings,
    private readonly report: (error: unknown) => void,
  ) {
    this.publisher = new WeightsPublisher({ ...options, threshold: settings.threshold, minIntervalMs: settings.minIntervalMs });
    this.now = options.now;
    this.lastPass = this.now();
  }

  /** After a learning step: a pass when the last is `everyMs` old; returns when the next pass is wanted, if one is. */
  async afterLearning(): Promise<number | undefined> {
    const now = this.now();
    if (now - this.lastPass < this.settings.everyMs) return this.lastPass + this.settings.everyMs;
    this.lastPass = now;
    const later = now + Math.max(this.settings.everyMs, LEAST_WAIT_MS);
    try {
      await this.publisher.publish();
    } catch (error) {
      this.report(error);
      return later;
    }
    return this.publisher.waiting > 0 ? later : undefined;
  }
}
