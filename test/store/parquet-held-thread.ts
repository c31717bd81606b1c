// A stand-in for the Parquet copy's thread (parquet-thread-halt.test.ts) that never ends on its
// own: when <dataDir>/hold is a FIFO it blocks in a read of it, a native call terminate() cannot
// interrupt (until the test closes the FIFO's writer); otherwise it spins in JavaScript, which
// terminate() ends at once.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { workerData } from "node:worker_threads";

const hold = join((workerData as { readonly dataDir: string }).dataDir, "hold");
if (existsSync(hold)) readFileSync(hold);
else for (;;);
