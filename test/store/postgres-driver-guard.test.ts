// The driver fault a PostgreSQL server survives (store/postgres/driver-guard.ts) is recognized by
// its own signature only: any other uncaught error must still end the process.
import { describe, expect, it } from "vitest";
import { isClosedSocketWrite } from "../../src/store/postgres/driver-guard.js";

function errorWith(make: () => Error, stack: string): Error {
  const error = make();
  error.stack = `${error.name}: ${error.message}\n${stack}`;
  return error;
}

const DRIVER_STACK = "    at Immediate.nextWrite (file:///srv/node_modules/postgres/src/connection.js:255:22)\n    at process.processImmediate (node:internal/timers:483:21)";

describe("isClosedSocketWrite", () => {
  it("knows postgres.js writing on a closed connection, as a SIGKILLed PostgreSQL caused it", () => {
    expect(isClosedSocketWrite(errorWith(() => new TypeError("Cannot read properties of null (reading 'write')"), DRIVER_STACK))).toBe(true);
  });

  it.each([
    ["the same message from another module", errorWith(() => new TypeError("Cannot read properties of null (reading 'write')"), "    at Immediate.nextWrite (file:///srv/dist/server/other.js:1:1)")],
    ["another property in the driver", errorWith(() => new TypeError("Cannot read properties of null (reading 'end')"), DRIVER_STACK)],
    ["another error type", errorWith(() => new Error("Cannot read properties of null (reading 'write')"), DRIVER_STACK)],
    ["a plain value", "boom"],
  ])("refuses %s", (_, error) => {
    expect(isClosedSocketWrite(error)).toBe(false);
  });
});
