// The Node host against its open-file limit (RLIMIT_NOFILE, `ulimit -n`; Node starts with the soft
// limit raised to the hard one). Every connection holds a file descriptor, and at the limit the
// kernel refuses accept(): libuv then drops the connection unanswered, so the client sees a reset
// and the server logs nothing. Event streams hold their connection for hours, so they are what
// fills the table: a new stream is refused with a 503 once fewer than the reserve's descriptors
// are left, kept for everything else (API requests, the store's files, the Parquet copy,
// scrapes). Each refusal is counted (vane_streams_refused_total) and logged at most once a
// minute. Linux only (/proc); elsewhere no stream is refused by this guard.
import { readFileSync, readdirSync } from "node:fs";
import type { Server } from "node:net";
import type { Logger } from "pino";

/** Descriptors kept for everything but new streams: 5 % of the limit, at least 64. */
const RESERVE_MIN = 64;
const RESERVE_SHARE = 0.05;
/** How old a count of the descriptors may be when a stream asks (connections opened and closed since are added): counted when asked, never on a timer. */
const RECOUNT_MS = 1_000;
/** At most one log line per this, with the refusals since the last one. */
const LOG_EVERY_MS = 60_000;

/** The soft limit on open files, from /proc/self/limits; undefined where it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const limit = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return limit === null ? undefined : Number(limit[1]);
  } catch {
    return undefined;
  }
}

const openFileCount = () => readdirSync("/proc/self/fd").length;

export interface OpenFileGuard {
  /** Whether another event stream may open now; counts and logs a refusal. */
  admit(): boolean;
  /** Counts `server`'s connections between two counts of the descriptors. */
  watch(server: Server): void;
}

export function guardOpenFiles(report: { metrics?: { streamRefused(reason: "open_files"): void }; log?: Logger }, limit = openFileLimit()): OpenFileGuard | undefined {
  if (limit === undefined) return undefined;
  const reserve = Math.max(RESERVE_MIN, Math.round(limit * RESERVE_SHARE));
  let counted = openFileCount();
  let countedAt = Date.now();
  /** Connections opened less those closed since the last count. */
  let since = 0;
  let refusedSinceLog = 0;
  let loggedAt = Number.NEGATIVE_INFINITY;
  const logRefusals = (inUse: number) => {
    const fields = { refused: refusedSinceLog, openFiles: inUse, limit, reserve };
    const message = "event streams refused: the server is near its open-file limit; raise it (ulimit -n, LimitNOFILE=) or add servers";
    if (report.log !== undefined) report.log.warn(fields, message);
    else console.error(`vane: ${message} (${JSON.stringify(fields)})`);
    refusedSinceLog = 0;
  };
  return {
    admit() {
      if (Date.now() - countedAt >= RECOUNT_MS) {
        counted = openFileCount();
        countedAt = Date.now();
        since = 0;
      }
      const inUse = counted + since;
      if (inUse < limit - reserve) return true;
      report.metrics?.streamRefused("open_files");
      refusedSinceLog++;
      const now = Date.now();
      if (now - loggedAt >= LOG_EVERY_MS) {
        loggedAt = now;
        logRefusals(inUse);
      }
      return false;
    },
    watch(server) {
      server.on("connection", (socket) => {
        since++;
        socket.once("close", () => since--);
      });
    },
  };
}
