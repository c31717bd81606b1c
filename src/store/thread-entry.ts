// The first module of every store thread (threads.ts): it gives the thread's young generation back
// once the thread goes quiet, as the event loop does (young-generation.ts), then loads the
// thread's own entry. Under a load the log writer's and the copy's new spaces grow to their bound
// (8 MiB) and, on a thread that then idles, stayed there.
import { workerData } from "node:worker_threads";
import { shrinkIdleYoungGeneration } from "./young-generation.js";

shrinkIdleYoungGeneration();
await import((workerData as { readonly threadEntry: string }).threadEntry);
