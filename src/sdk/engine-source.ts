// The engine from the `wasm` option: a compiled Module is instantiated synchronously (workers
// cannot compile at run time); bytes and URLs go through the engine's loader. Without the option,
// the build beside the SDK file: vane.wasm, or vane-scalar.wasm where wasm SIMD is missing.
import { BucketEngine } from "../engine/bucket-engine.js";
import { compileEngine, instantiateEngine, simdSupported } from "../engine/loader.js";

export type WasmSource = WebAssembly.Module | BufferSource | URL | string;

/** Resolution needs only the BucketEngine: the bandits stay out of the SDK. */
export async function engineFrom(wasm: WasmSource | undefined): Promise<BucketEngine> {
  if (wasm instanceof WebAssembly.Module) return instantiateEngine(wasm, BucketEngine);
  if (wasm !== undefined) return instantiateEngine(await compileEngine(wasm), BucketEngine);
  const beside = new URL(simdSupported() ? "./vane.wasm" : "./vane-scalar.wasm", import.meta.url);
  try {
    return instantiateEngine(await compileEngine(beside), BucketEngine);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`could not load the Vane engine from ${beside.href} (${reason}); pass the wasm option (in workers, the imported WebAssembly.Module)`, { cause: error });
  }
}
