// A stand-in for the Parquet copy's process (parquet-process-halt.test.ts) that never ends on its
// own: it says it is idle, then blocks its only thread for good (as a native call that never
// returns would), so it reads no "close", no "halt" and no disconnect; only SIGKILL ends it.
process.send!({ type: "idle" }, undefined, {}, () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));
