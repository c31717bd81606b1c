// Starts the writer thread from the TypeScript source under tsx (tests, `node --import tsx` runs):
// a worker's entry is loaded before `--import` hooks apply, so they are registered here first.
import { register } from "tsx/esm/api";

register();
await import(new URL("./writer-worker.ts", import.meta.url).href);
