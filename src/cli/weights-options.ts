// `vane serve`'s bounds on publishing learned weights (publisher.ts): every publication is a new
// bundle version, which every polling client downloads in full instead of a 304.
import { DEFAULT_PUBLISH_INTERVAL_MS, DEFAULT_WEIGHT_THRESHOLD } from "../adaptive/publisher.js";
import { UsageError } from "./args.js";

const MINUTE_MS = 60_000;
const MAX_MINUTES = 7 * 24 * 60;

export const WEIGHTS_OPTIONS = {
  "weights-threshold": { type: "string", default: String(DEFAULT_WEIGHT_THRESHOLD) },
  "weights-min-minutes": { type: "string", default: String(DEFAULT_PUBLISH_INTERVAL_MS / MINUTE_MS) },
} as const;

export const WEIGHTS_HELP = `  --weights-threshold W
               publish learned weights only when some arm's weight moved by at least W since the
               version served (default ${DEFAULT_WEIGHT_THRESHOLD}; from 0 to 1)
  --weights-min-minutes M
               publish learned weights for a project and env at most once every M minutes
               (default ${DEFAULT_PUBLISH_INTERVAL_MS / MINUTE_MS}; fractions allowed, 0 for no bound)`;

export function weightsOptions(values: { "weights-threshold": string; "weights-min-minutes": string }, usage: string): { weightsThreshold: number; weightsMinIntervalMs: number } {
  const threshold = Number(values["weights-threshold"]);
  const minutes = Number(values["weights-min-minutes"]);
  if (values["weights-threshold"].trim() === "" || !(threshold >= 0 && threshold <= 1)) {
    throw new UsageError(`--weights-threshold must be a number from 0 to 1, got "${values["weights-threshold"]}"`, usage);
  }
  if (values["weights-min-minutes"].trim() === "" || !(minutes >= 0 && minutes <= MAX_MINUTES)) {
    throw new UsageError(`--weights-min-minutes must be a number of minutes from 0 to ${MAX_MINUTES}, got "${values["weights-min-minutes"]}"`, usage);
  }
  return { weightsThreshold: threshold, weightsMinIntervalMs: Math.round(minutes * MINUTE_MS) };
}
