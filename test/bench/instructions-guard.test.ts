// The CI guard on instructions per request (bench/instructions/guard.ts), without valgrind: a row
// fails only when it grew past the tolerance over its committed figure.
import { describe, expect, it } from "vitest";
import { GUARD_TOLERANCE, judge, verdictLines } from "../../bench/instructions/guard.js";
import { parseCallgrind } from "../../bench/instructions/callgrind-file.js";
import { stages } from "../../bench/instructions/breakdown.js";

const committed = { warmup: 400, requests: 400, rows: { resolve: 1_000_000, "config-304": 200_000 } };

describe("the instructions guard", () => {
  it("fails a row 30 % over its committed figure and passes one 20 % over", () => {
    const verdicts = judge(committed, { resolve: 1_300_000, "config-304": 240_000 });
    expect(verdicts.map((v) => [v.key, v.ok])).toEqual([
      ["resolve", false],
      ["config-304", true],
    ]);
    expect(GUARD_TOLERANCE).toBe(0.25);
    expect(verdictLines(verdicts).join("\n")).toMatch(/FAIL resolve: 1300 k against 1000 k committed \(\+30 %/);
  });

  it("passes a row that shrank, and a row with no committed figure (listed, to be recorded)", () => {
    const verdicts = judge(committed, { resolve: 600_000, decide: 5_000_000 });
    expect(verdicts.every((v) => v.ok)).toBe(true);
    expect(verdictLines(verdicts)[1]).toContain("no committed figure");
  });
});

describe("callgrind's file, by stage", () => {
  // Two functions named by their stage and a malloc both call: its own instructions split as their calls to it cost.
  const file = [
    "events: Ir",
    "fn=(1) llhttp_execute",
    "0 300",
    "cfn=(3) malloc",
    "calls=1 0",
    "0 100",
    "fn=(2) JS:*resolve file:///x/dist/bundle/resolve.js:1:1",
    "0 500",
    "cfn=(3)",
    "calls=3 0",
    "0 300",
    "fn=(3)",
    "0 400",
    "totals: 1200",
  ].join("\n");

  it("reads each function's own and inclusive instructions, and its callers", () => {
    const thread = parseCallgrind(file);
    expect(thread.total).toBe(1200);
    expect(thread.self.get("malloc")).toBe(400);
    expect(thread.inclusive.get("llhttp_execute")).toBe(400);
    expect(thread.callers.get("malloc")).toEqual(new Map([["llhttp_execute", 100], ["JS:*resolve file:///x/dist/bundle/resolve.js:1:1", 300]]));
  });

  it("gives an unnamed function's instructions to its callers' stages, in proportion", () => {
    expect(Object.fromEntries(stages(parseCallgrind(file)))).toEqual({ "HTTP parse": 400, resolve: 800 });
  });
});
