// A duration given in a unit (days, hours) that may be fractional: retention in tests and short checks
// is minutes, written as a fraction of a day.
import { UsageError } from "./args.js";

export function durationOption(text: string, option: string, how: { unitMs: number; usage: string }): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new UsageError(`${option} must be a number greater than 0, got "${text}"`, how.usage);
  }
  return Math.round(n * how.unitMs);
}
