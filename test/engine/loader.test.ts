import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, ENGINE_URL, SCALAR_ENGINE_URL, createEngine, loadEngine, simdSupported } from "../../src/index.js";
import { ABI_VERSION, type EngineExports } from "../../src/engine/abi.js";

const EXPECTED = 122; // docs/engine.md: bucket("exp-layer", "user-1", 1000)
const works = (engine: Engine) => expect(engine.bucket("exp-layer", "user-1", 1000)).toBe(EXPECTED);

describe("loading the engine", () => {
  let bytes: Uint8Array<ArrayBuffer>;
  let server: ReturnType<typeof createServer>;
  let base: string;

  beforeAll(async () => {
    bytes = new Uint8Array(await readFile(ENGINE_URL));
    // A real HTTP server on loopback: one path with the wasm MIME type (streamed compile), one without.
    server = createServer((req, res) => {
      if (req.url === "/vane.wasm") res.writeHead(200, { "content-type": "application/wasm" }).end(bytes);
      else if (req.url === "/octet.wasm") res.writeHead(200, { "content-type": "application/octet-stream" }).end(bytes);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("defaults to the SIMD build where SIMD is supported (Node 20 has it)", async () => {
    expect(simdSupported()).toBe(true);
    const engine = await loadEngine();
    expect(engine.simd).toBe(true);
    works(engine);
  });

  it("loads the scalar build too", async () => {
    const engine = await loadEngine(SCALAR_ENGINE_URL);
    expect(engine.simd).toBe(false);
    works(engine);
  });

  it("from bytes: a Buffer, a Uint8Array and an ArrayBuffer", async () => {
    works(await loadEngine(Buffer.from(bytes) as Uint8Array<ArrayBuffer>));
    works(await loadEngine(bytes));
    works(await loadEngine(bytes.slice().buffer));
  });

  it("from a file URL and a file path", async () => {
    works(await loadEngine(ENGINE_URL));
    works(await loadEngine(ENGINE_URL.href));
    works(await loadEngine(fileURLToPath(ENGINE_URL)));
  });

  it("from an http URL, streamed when served as application/wasm, else from bytes", async () => {
    works(await loadEngine(`${base}/vane.wasm`));
    works(await loadEngine(new URL(`${base}/octet.wasm`)));
    works(await loadEngine(await fetch(`${base}/vane.wasm`)));
  });

  it("from a precompiled WebAssembly.Module, asynchronously or at once (workers)", async () => {
    const module = await WebAssembly.compile(bytes);
    works(await loadEngine(module));
    works(createEngine(module));
  });

  it("fails clearly on a missing file, an HTTP error, bytes that are not wasm, or a wrong source", async () => {
    await expect(loadEngine(new URL("./missing.wasm", ENGINE_URL))).rejects.toThrow(/ENOENT/);
    await expect(loadEngine(`${base}/nothing.wasm`)).rejects.toThrow(/engine fetch failed: 404/);
    await expect(loadEngine(new Uint8Array([1, 2, 3]))).rejects.toThrow(WebAssembly.CompileError);
    await expect(loadEngine(42 as never)).rejects.toThrow(TypeError);
  });

  it("refuses a module built for another ABI", () => {
    const exports = { abiVersion: () => ABI_VERSION + 1 } as unknown as EngineExports;
    expect(() => new Engine(exports)).toThrow(new RegExp(`ABI ${ABI_VERSION + 1} does not match the loader.s ABI ${ABI_VERSION}`));
  });

  it("imports nothing from the host", () => {
    expect(WebAssembly.Module.imports(new WebAssembly.Module(bytes))).toEqual([]);
  });
});
