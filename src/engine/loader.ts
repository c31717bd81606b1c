// Obtains and instantiates the engine in any host: Node (a file), browsers (a URL, streamed),
// workers (a precompiled WebAssembly.Module, since Workers refuse to compile at run time).
import type { Engine } from "./engine.js";
import { createEngine, simdSupported } from "./instantiate.js";

export { createEngine, instantiateEngine, simdSupported } from "./instantiate.js";

/** The SIMD build, and the scalar build for hosts without wasm SIMD. */
export const ENGINE_URL = new URL("../../build/vane.wasm", import.meta.url);
export const SCALAR_ENGINE_URL = new URL("../../build/vane-scalar.wasm", import.meta.url);

export type EngineSource = WebAssembly.Module | BufferSource | Response | URL | string;

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
