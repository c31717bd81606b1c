// The engine from the `wasm` option: a compiled Module is instantiated synchronously (workers
// cannot compile at run time); bytes and URLs go through the engine's loader. Without the option,
// the build beside the SDK file: vane.wasm, or vane-scalar.wasm where wasm SIMD is missing.
import type { Engine } from "../engine/engine.js";
import { createEngine, loadEngine, simdSupported } from "../engine/loader.js";

export type WasmSource = WebAssembly.Module | BufferSource | URL | string;

export async function engineFrom(wasm: WasmSource | undefined): Promise<Engine> {
  if (wasm instanceof WebAssembly.Module) return createEngine(wasm);
  if (wasm !== undefined) return loadEngine(wasm);
  const beside = new URL(simdSupported() ? "./vane.wasm" : "./vane-scalar.wasm", import.meta.url);
  try {
    return await loadEngine(beside);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`could not load the Vane engine from ${beside.href} (${reason}); pass the wasm option (in workers, the imported WebAssembly.Module)`, { cause: error });
  }
}
