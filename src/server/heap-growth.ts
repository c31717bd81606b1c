// How far V8 lets a heap grow between full collections, for a long-running server. V8 grows an
// old generation to its live size times a factor that it derives from the heap's bound: up to 4×
// at Node's default bound (a quarter of the machine's memory). Under load the event loop's heap
// grew to 60–150 MiB around ~20 MiB live, and an isolate that goes idle collects nothing more, so
// that stayed resident after the load. Only a command-line flag bounds the event loop's heap;
// this factor V8 reads at each collection, so it can be set from inside the process.
import { setFlagsFromString } from "node:v8";

/** 1.4×: the factor V8 derives for a 512 MiB bound, the worker threads' (store/threads.ts). */
export const HEAP_GROWING_PERCENT = 40;

/** For every isolate of the process, from its next full collection on. */
export function boundHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
