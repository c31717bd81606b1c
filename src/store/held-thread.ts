// A store thread that a bounded wait gave up on: terminate() was still pending after its bound,
// the thread held in a native call that never returns to JavaScript (a blocking read, an fsync on
// a hung disk). Only the log writer is such a thread now: the Parquet copy is a child process,
// killed past its bound (parquet-process.ts). Node's own exit waits for such a thread too (process.exit joins
// every worker), so whoever ends the process must know: `vane serve` then kills itself
// (src/cli/serve-exit.ts).
export class ThreadHeld extends Error {
  constructor(
    /** Which thread, for the log and the CLI's last line: "the event log's writer". */
    readonly thread: string,
    message: string,
  ) {
    super(message);
    this.name = "ThreadHeld";
  }
}
