// Starts a worker thread from its TypeScript source under tsx (tests, `node --import tsx` runs):
// a worker's entry is loaded before `--import` hooks apply, so they are registered here first.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.sourceEntry);
