// The server's log line for a store call that failed. A request answered 503 because its decision
// could not be stored counted the failure in /metrics, but the log said nothing of why: a log
// writer thread that died at its start showed only as 503s. Under an outage every request fails,
// so each store call is told at most once per interval, with how many failures it left untold.
import type { Logger } from "pino";

export const STORE_FAILURE_LOG_MS = 10_000;

export function storeFailureLog(log: Pick<Logger, "warn">, everyMs = STORE_FAILURE_LOG_MS, now: () => number = Date.now): (store: string, operation: string, error: unknown) => void {
  const calls = new Map<string, { toldAt: number; untold: number }>();
  return (store, operation, error) => {
    const call = `${store}.${operation}`;
    const at = now();
    const seen = calls.get(call);
    if (seen !== undefined && at - seen.toldAt < everyMs) {
      seen.untold++;
      return;
    }
    log.warn({ err: error, store, operation, untoldSinceLast: seen?.untold ?? 0 }, "store call failed");
    calls.set(call, { toldAt: at, untold: 0 });
  };
}
