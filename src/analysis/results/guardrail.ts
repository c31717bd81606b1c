// A guardrail's status for one treatment allocation (runtime-api.md limits: "minimum units per
// treatment allocation for guardrail evaluation: 30; below it the guardrail is reported as
// `insufficient_data`").
import type { Interval } from "./compare.js";

export const GUARDRAIL_MIN_UNITS = 30;

/** The direction the metric must not move. */
export type GuardrailDirection = "increase" | "decrease";
export type GuardrailStatus = "ok" | "violated" | "insufficient_data";

/**
 * insufficient_data below 30 units in the treatment (or when no interval exists: control has
 * fewer than two units); violated when the lift's 95% interval lies wholly on the bad side of 0;
 * else ok.
 */
export function guardrailStatus(direction: GuardrailDirection, treatmentUnits: number, liftInterval: Interval | undefined): GuardrailStatus {
  if (treatmentUnits < GUARDRAIL_MIN_UNITS || liftInterval === undefined) return "insufficient_data";
  const [low, high] = liftInterval;
  const violated = direction === "increase" ? low > 0 : high < 0;
  return violated ? "violated" : "ok";
}
