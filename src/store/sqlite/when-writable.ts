// Writes made on the server's own thread (learned state, published weights, checkpoints, retention)
// must not block its event loop while another connection holds the write lock: SQLite's
// busy_timeout waits by sleeping the calling thread. The main connection therefore has no busy
// timeout; a write that finds the lock taken fails at once and is tried again after a timer, with
// growing pauses, until the deadline. Reads never need the lock (WAL).
const FIRST_PAUSE_MS = 1;
const LONGEST_PAUSE_MS = 50;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT" || code === "SQLITE_LOCKED";
}

export type WhenWritable = <T>(write: () => T) => Promise<T>;

/** Runs `write` (a synchronous transaction) once the lock is free, for at most `deadlineMs`. */
export function whenWritable(deadlineMs: number): WhenWritable {
  return async <T>(write: () => T): Promise<T> => {
    const giveUpAt = Date.now() + deadlineMs;
    for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
      try {
        return write();
      } catch (error) {
        if (!isBusy(error) || Date.now() >= giveUpAt) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  };
}
