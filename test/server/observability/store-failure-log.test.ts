// A failed store call reaches the server's log, at most once per interval per call, with the
// failures left untold since.
import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { observeStores } from "../../../src/server/observability/observed-stores.js";
import { storeFailureLog } from "../../../src/server/observability/store-failure-log.js";
import type { Stores } from "../../../src/store/types.js";

function logged() {
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  let clock = 0;
  const log = { warn: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }) };
  return { lines, log: storeFailureLog(log as never, 10_000, () => clock), advance: (ms: number) => (clock += ms) };
}

describe("storeFailureLog", () => {
  it("tells a call's first failure, then one per interval with how many it left untold", () => {
    const { lines, log, advance } = logged();
    const down = new Error("database is locked");
    log("events", "append", down);
    for (let i = 0; i < 5; i++) log("events", "append", down);
    log("bundles", "get", down);
    advance(10_000);
    log("events", "append", down);
    expect(lines.map(({ fields, message }) => [message, fields.store, fields.operation, fields.untoldSinceLast, fields.err])).toEqual([
      ["store call failed", "events", "append", 0, down],
      ["store call failed", "bundles", "get", 0, down],
      ["store call failed", "events", "append", 5, down],
    ]);
  });

  it("hears of the observed stores' failures, rejected or thrown, and of nothing that succeeded", async () => {
    const { lines, log } = logged();
    const events = {
      append: async (what: string) => {
        if (what === "reject") throw new Error("writer thread restarting");
        return "stored";
      },
      ping: () => {
        throw new Error("cannot read");
      },
    };
    const stores = { bundles: {}, keys: {}, events, learning: {}, leases: {} } as unknown as Stores;
    const wrapped = observeStores(stores, { tracer: trace.getTracer("test"), failed: log }).events as unknown as typeof events;
    expect(await wrapped.append("ok")).toBe("stored");
    await expect(wrapped.append("reject")).rejects.toThrow("writer thread restarting");
    expect(() => wrapped.ping()).toThrow("cannot read");
    expect(lines.map(({ fields }) => `${fields.store}.${fields.operation}: ${(fields.err as Error).message}`)).toEqual(["events.append: writer thread restarting", "events.ping: cannot read"]);
  });
});
