// A stand-in for the event log's writer thread (writer-close-bound.test.ts) that never answers nor
// ends on its own: when a FIFO named "hold" sits beside the database file it blocks in a read of
// it, a native call terminate() cannot interrupt (as an fsync on a hung disk); otherwise it spins
// in JavaScript, which terminate() ends at once.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { workerData } from "node:worker_threads";

const hold = join(dirname((workerData as { readonly path: string }).path), "hold");
if (existsSync(hold)) readFileSync(hold);
else for (;;);
