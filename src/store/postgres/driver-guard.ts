// postgres.js 3.4.9 defers small writes with setImmediate; when the connection closes first (the
// database killed, a backend gone) that deferred write runs on a null socket and throws from the
// timer, where no caller can catch it, and Node ends the process: every Vane server on the
// database dies with it (porsager/postgres#1154, #1208; the guard of PR #1209 is not released).
// The query the write belonged to has already been rejected with CONNECTION_CLOSED, so the
// server answers 503 and goes on. Only that one error is survived; any other uncaught error
// still ends the process as before. Remove once the driver guards nextWrite itself.

/** The driver's write on a closed connection (connection.js nextWrite), and nothing else. */
export function isClosedSocketWrite(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    /\(reading 'write'\)/.test(error.message) &&
    /at (?:Immediate\.)?nextWrite \([^)]*postgres[\\/]src[\\/]connection\.js/.test(error.stack ?? "")
  );
}

let installed = false;

/** Once per process: survive the driver's closed-socket write; report any other uncaught error and exit 1, as Node would. */
export function surviveClosedSocketWrites(warn: (message: string) => void): void {
  if (installed) return;
  installed = true;
  process.on("uncaughtException", (error, origin) => {
    if (isClosedSocketWrite(error)) {
      warn("PostgreSQL connection closed under a pending write (driver fault survived; its query was already refused)");
      return;
    }
    process.stderr.write(`${origin}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
