// A thread for threads.test.ts: reports the heap bound its isolate was given, then ends.
import { getHeapStatistics } from "node:v8";
import { parentPort } from "node:worker_threads";

parentPort!.postMessage(getHeapStatistics().heap_size_limit);
