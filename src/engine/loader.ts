// Obtains and instantiates the engine in any host: Node (a file), browsers (a URL, streamed),
// workers (a precompiled WebAssembly.Module, since Workers refuse to compile at run time).
import type { EngineExports } from "./abi.js";
import { Engine } from "./engine.js";

/** The SIMD build, and the scalar build for hosts without wasm SIMD. */
export const ENGINE_URL = new URL("../../build/vane.wasm", import.meta.url);
export const SCALAR_ENGINE_URL = new URL("../../build/vane-scalar.wasm", import.meta.url);

export type EngineSource = WebAssembly.Module | BufferSource | Response | URL | string;

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

/**
 * Loads the engine from bytes, a Response, a URL (file:, http:, https:, relative to the page
 * or this module), or a compiled Module. Without a source: the SIMD build next to this package
 * when the host supports SIMD, else the scalar build.
 */
export async function loadEngine(source?: EngineSource): Promise<Engine> {
  return createEngine(await compileEngine(source ?? (simdSupported() ? ENGINE_URL : SCALAR_ENGINE_URL)));
}

/** The compiled module from any source loadEngine takes. */
export async function compileEngine(source: EngineSource): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return source;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return WebAssembly.compile(source as BufferSource);
  if (typeof Response !== "undefined" && source instanceof Response) return compileResponse(source);
  if (typeof source === "string" || source instanceof URL) {
    const base = (globalThis as { location?: { href: string } }).location?.href ?? import.meta.url;
    const url = new URL(source, base);
    if (url.protocol === "file:") {
      const { readFile } = await import("node:fs/promises");
      return WebAssembly.compile(await readFile(url));
    }
    return compileResponse(await fetch(url));
  }
  throw new TypeError("engine source must be a WebAssembly.Module, bytes, a Response or a URL");
}

async function compileResponse(response: Response): Promise<WebAssembly.Module> {
  if (!response.ok) throw new Error(`engine fetch failed: ${response.status} ${response.url}`);
  // compileStreaming needs Content-Type application/wasm; servers that say otherwise get bytes.
  if (response.headers.get("content-type")?.split(";")[0]?.trim() === "application/wasm") {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}
