// `vane serve`'s --metrics and --log-level: where /metrics answers and how much is logged.
import type { LevelWithSilent } from "pino";
import { LOG_LEVELS } from "../server/observability/logger.js";
import type { MetricsExposure } from "../server/node.js";
import { UsageError, integerOption } from "./args.js";

export const OBSERVABILITY_HELP = `  --metrics off|on|PORT
               GET /metrics in Prometheus text format: off (default), on the API's port, or on a
               port of its own (bound to --host), e.g. --metrics 9464
  --log-level L
               JSON log lines on stdout, from the most to the least: ${LOG_LEVELS.filter((l) => l !== "silent").reverse().join(", ")}
               (default info: one line per request), or silent`;

export function metricsOption(value: string, usage: string): MetricsExposure {
  if (value === "off" || value === "on") return value;
  if (!/^\d+$/.test(value)) throw new UsageError(`--metrics must be off, on or a port number, not "${value}"`, usage);
  return { port: integerOption(value, "--metrics", { min: 0, max: 65535, usage }) };
}

export function logLevelOption(value: string, usage: string): LevelWithSilent {
  const level = LOG_LEVELS.find((known) => known === value);
  if (level === undefined) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(", ")}, not "${value}"`, usage);
  return level;
}
