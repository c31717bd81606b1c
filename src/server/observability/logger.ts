// Structured JSON logs with pino (Node only): one line per request at info, internal errors at
// error with their cause chain, background failures at warn. Nothing logged carries a key's
// secret: lines are built from fields the service chose (the key's id, never the Authorization
// header), and a top-level "authorization" or "secret" field is redacted should one ever be added.
import { type DestinationStream, type Logger, type LevelWithSilent, pino } from "pino";
import type { RequestLine, RequestLogger } from "./types.js";

export const LOG_LEVELS: readonly LevelWithSilent[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export interface LogOptions {
  readonly level: LevelWithSilent;
  /** Which requests get a line at info; `errors` when absent (RequestLogChoice). */
  readonly requests?: RequestLogChoice;
  /** Standard output when absent. */
  readonly destination?: DestinationStream;
}

export function createServiceLogger(options: LogOptions): Logger {
  return pino(
    {
      name: "vane",
      level: options.level,
      base: { pid: process.pid },
      serializers: { err: pino.stdSerializers.errWithCause },
      // Top-level paths only: wildcard paths made building a request line about three times slower.
      redact: { paths: ["authorization", "secret"], censor: "[redacted]" },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}

/**
 * Which requests get a line: `all`; `errors` (the default of `vane serve`), every request but
 * those of the SDK routes (/v1/…, /ofrep/…) that succeeded, as LaunchDarkly's relay, GrowthBook's
 * proxy and Unleash's edge log no line per flag request: at thousands of requests a second the
 * line was a large share of a 304's cost (docs/performance-history.md); or `off`, none (faults are still
 * logged on their own lines).
 */
export type RequestLogChoice = "all" | "errors" | "off";

export const REQUEST_LOG_CHOICES: readonly RequestLogChoice[] = ["errors", "all", "off"];

/** The SDK routes, whose successful requests `errors` leaves out. */
const isHotPath = (path: string): boolean => path.startsWith("/v1/") || path.startsWith("/ofrep/");

const WANTS: Record<RequestLogChoice, RequestLogger["wants"]> = {
  all: () => true,
  errors: (path, status) => status >= 400 || !isHotPath(path),
  off: () => false,
};

/** The request middleware's line, at info whatever the status (a fault is logged on its own line, at error). */
export function requestLogger(log: Logger, which: RequestLogChoice): RequestLogger {
  return {
    wants: WANTS[which],
    request({ requestId, seconds, ...line }: RequestLine) {
      log.info({ reqId: requestId, ...line, ms: Math.round(seconds * 1e6) / 1000 }, "request");
    },
  };
}

/** createApp's onInternalError: the fault with its cause, and the request it broke. */
export function internalErrorLogger(log: Logger): (error: unknown, requestId?: string) => void {
  return (error, requestId) => log.error({ err: error, reqId: requestId }, "internal error");
}
