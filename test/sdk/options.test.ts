// Bad input to the client gets a clear error naming what is wrong, before anything is sent; and
// Retry-After is read in both of its forms.
import { describe, expect, it } from "vitest";
import { createClient } from "../../src/sdk/index.js";
import type { ClientOptions } from "../../src/sdk/index.js";
import { retryAfterMs } from "../../src/sdk/http.js";
import { FetchLog, VERSION_1, demoBundle, wasm } from "./helpers.js";

const log = new FetchLog();
const base: ClientOptions = { baseUrl: "http://127.0.0.1:9", apiKey: "vane_pk_x", projectId: "demo", wasm, fetch: log.fetch, bootstrap: demoBundle(VERSION_1) };

describe("createClient", () => {
  it.each([
    ["no baseUrl", { baseUrl: "" }, TypeError, "baseUrl must be a non-empty string"],
    ["no apiKey", { apiKey: undefined }, TypeError, "apiKey must be a non-empty string"],
    ["a projectId that is not a string", { projectId: 7 }, TypeError, "projectId must be a non-empty string"],
    ["an empty env", { env: "" }, TypeError, "env must be a non-empty string"],
    ["an unknown mode", { mode: "edge" }, TypeError, 'mode must be "local" or "server", got "edge"'],
    ["flushAt 0", { flushAt: 0 }, RangeError, "flushAt must be an integer in 1..1000, got 0"],
    ["flushAt past the batch limit", { flushAt: 1001 }, RangeError, "flushAt must be an integer in 1..1000"],
    ["a negative interval", { flushIntervalMs: -1 }, RangeError, "flushIntervalMs must be a finite number >= 0"],
    ["wasm that is not an engine", { wasm: new Uint8Array([1, 2, 3]) }, WebAssembly.CompileError, "WebAssembly.compile()"],
  ])("rejects %s", async (_name, extra, type, message) => {
    const creating = createClient({ ...base, ...(extra as Partial<ClientOptions>) });
    await expect(creating).rejects.toThrow(type);
    await expect(creating).rejects.toThrow(message);
    expect(log.calls).toEqual([]);
  });
});

describe("resolveLocal", () => {
  it("refuses what the server's resolve refuses, with its message", async () => {
    const client = await createClient(base);
    expect(() => client.resolveLocal({ userId: { id: 1 } })).toThrow(new TypeError("context.userId must be a string or a finite number, got object"));
    expect(() => client.resolveLocal([] as unknown as Record<string, unknown>)).toThrow("context must be an object");
    expect(() => client.resolveLocal({ userId: "u" }, "checkout.buttonColor" as unknown as string[])).toThrow("parameters must be an array of strings");
    await expect(client.resolve({ userId: Number.NaN })).rejects.toThrow("context.userId must be a string or a finite number, got NaN");
    await client.close();
  });
});

describe("Retry-After", () => {
  const answer = (value: string) => new Response(null, { status: 503, headers: { "Retry-After": value } });

  it("is read as seconds or as an HTTP date", () => {
    expect(retryAfterMs(answer("5"))).toBe(5000);
    const inThirtySeconds = retryAfterMs(answer(new Date(Date.now() + 30_000).toUTCString()))!;
    expect(inThirtySeconds).toBeGreaterThan(28_000); // HTTP dates have whole seconds
    expect(inThirtySeconds).toBeLessThanOrEqual(30_000);
    expect(retryAfterMs(answer("soon"))).toBeUndefined();
    expect(retryAfterMs(new Response(null, { status: 503 }))).toBeUndefined();
  });
});
