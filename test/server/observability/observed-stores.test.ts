// The observed stores outside a request's trace (background work, and every request when no
// tracer provider is registered): failures counted once per call, whether the store's method
// throws or its promise rejects, and the caller sees what the store gave.
import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { observeStores } from "../../../src/server/observability/observed-stores.js";
import type { Stores } from "../../../src/store/types.js";

class FakeEvents {
  calls: unknown[][] = [];
  async append(...args: unknown[]): Promise<string> {
    this.calls.push(args);
    if (args[0] === "reject") throw new Error("store down");
    return `stored ${args.length}`;
  }
  ping(mode: string): string {
    if (mode === "throw") throw new Error("cannot read");
    return "ok";
  }
}

function observed(metrics: boolean) {
  const events = new FakeEvents();
  const counted: string[] = [];
  const stores = { bundles: {}, keys: {}, events, learning: {}, leases: {} } as unknown as Stores;
  const observers = { tracer: trace.getTracer("test"), ...(metrics && { metrics: { storeError: (store: string, operation: string) => counted.push(`${store}.${operation}`) } }) };
  const wrapped = observeStores(stores, observers).events as unknown as FakeEvents;
  return { events, wrapped, counted };
}

describe("observed stores, untraced", () => {
  it("counts a rejected call once and rejects the caller with the store's error", async () => {
    const { wrapped, counted, events } = observed(true);
    await expect(wrapped.append("reject")).rejects.toThrow("store down");
    expect(counted).toEqual(["events.append"]);
    expect(await wrapped.append("a", "b", undefined)).toBe("stored 3");
    // Every argument reaches the store as given, how many there were included.
    expect(events.calls).toEqual([["reject"], ["a", "b", undefined]]);
    expect(counted).toEqual(["events.append"]);
  });

  it("counts a method that throws and rethrows it; a plain value comes back as is", () => {
    const { wrapped, counted } = observed(true);
    expect(() => wrapped.ping("throw")).toThrow("cannot read");
    expect(wrapped.ping("read")).toBe("ok");
    expect(counted).toEqual(["events.ping"]);
  });

  it("hands back the store's own promise when there is nothing to count", async () => {
    const { wrapped, events } = observed(false);
    expect(wrapped.append).toBe(wrapped.append);
    const appended = wrapped.append("x");
    await expect(appended).resolves.toBe("stored 1");
    await expect(wrapped.append("reject")).rejects.toThrow("store down");
    expect(events.calls).toHaveLength(2);
  });
});
