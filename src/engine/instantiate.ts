// Instantiates a compiled engine, with no way of obtaining one: the Worker imports only this, so
// the loader's file reading (node:fs, for Node) stays out of its bundle.
import type { EngineExports } from "./abi.js";
import { Engine } from "./engine.js";

// The smallest module using a v128 instruction (from wasm-feature-detect): valid iff SIMD is.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

export function simdSupported(): boolean {
  return WebAssembly.validate(SIMD_PROBE);
}

const imports = {
  env: {
    abort(): never {
      throw new Error("vane engine aborted");
    },
  },
};

/** Instantiates a compiled engine synchronously (workers import the .wasm as a Module). */
export function createEngine(module: WebAssembly.Module): Engine {
  return instantiateEngine(module, Engine);
}

/**
 * Instantiates a compiled module as `Face`: Engine, or BucketEngine where only resolution is
 * needed (the client SDK, whose bundle then leaves the bandits out).
 */
export function instantiateEngine<E>(module: WebAssembly.Module, Face: new (exports: EngineExports) => E): E {
  const instance = new WebAssembly.Instance(module, imports);
  return new Face(instance.exports as unknown as EngineExports);
}
