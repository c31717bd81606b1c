// `vane serve`'s --metrics and --log-level: where /metrics answers and how much is logged.
import type { LevelWithSilent } from "pino";
import { LOG_LEVELS, REQUEST_LOG_CHOICES, type RequestLogChoice } from "../server/observability/logger.js";
import type { MetricsExposure } from "../server/node.js";
import { UsageError, integerOption } from "./args.js";

export const OBSERVABILITY_HELP = `  --metrics off|on|PORT
               GET /metrics in Prometheus text format: off (default), on the API's port, or on a
               port of its own (bound to --host), e.g. --metrics 9464
  --log-level L
               JSON log lines on stdout, from the most to the least: ${LOG_LEVELS.filter((l) => l !== "silent").reverse().join(", ")}
               (default info), or silent
  --log-requests errors|all|off
               which requests get a line at info: errors (default: every request but the SDK
               routes' successful ones, /v1/… and /ofrep/…), all, or off`;

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

export function requestLogOption(value: string, usage: string): RequestLogChoice {
  const choice = REQUEST_LOG_CHOICES.find((known) => known === value);
  if (choice === undefined) throw new UsageError(`--log-requests must be one of ${REQUEST_LOG_CHOICES.join(", ")}, not "${value}"`, usage);
  return choice;
}
