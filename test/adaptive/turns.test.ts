// The learner's slices (turns.ts): TURN_MS while the event loop has anything to run, longer (and
// the store's parts with them) while each turn handed back comes back at once.
import { describe, expect, it } from "vitest";
import { IDLE_GROWTH, IDLE_TURN_MS, TURN_MS, type TurnClock, Turns } from "../../src/adaptive/turns.js";

/** A clock the test moves: `busyMs` is what the event loop runs in each turn handed to it. */
function fakeLoop(busyMs: () => number): TurnClock & { ms: number } {
  const clock = {
    ms: 0,
    now: () => clock.ms,
    yieldTurn: async () => {
      clock.ms += busyMs();
    },
  };
  return clock;
}

/** 1/1024 ms: exact in binary, so a slice's items are exact. */
const ITEM_MS = 1 / 1024;

/** Items walked, each `itemMs` long, until the slice is spent. */
function slice(turns: Turns, clock: { ms: number }, itemMs: number): number {
  let items = 0;
  do {
    clock.ms += itemMs;
    items++;
  } while (!turns.spent() && items < 1e6);
  return items;
}

describe("the learner's turns", () => {
  it("grows the slice and the store's parts while the event loop is idle, up to IDLE_GROWTH times", async () => {
    const clock = fakeLoop(() => 0);
    const turns = new Turns(TURN_MS, clock);
    const walked = [slice(turns, clock, ITEM_MS)];
    const parts = [turns.rows(1000)];
    for (let i = 0; i < 4; i++) {
      await turns.next();
      walked.push(slice(turns, clock, ITEM_MS));
      parts.push(turns.rows(1000));
    }
    // 2,048 items of ~1 µs fill 2 ms.
    expect(walked).toEqual([2048, 4096, 8192, 8192, 8192]);
    expect(IDLE_GROWTH).toBe(4);
    expect(parts).toEqual([1000, 2000, 4000, 4000, 4000]);
  });

  it("goes back to TURN_MS after a turn in which the event loop ran anything", async () => {
    let busy = 0;
    const clock = fakeLoop(() => busy);
    const turns = new Turns(TURN_MS, clock);
    await turns.next();
    await turns.next();
    expect(turns.rows(1000)).toBe(4000);
    busy = 2 * IDLE_TURN_MS; // a request's callbacks
    await turns.next();
    expect(turns.rows(1000)).toBe(1000);
    expect(slice(turns, clock, ITEM_MS)).toBe(2048);
  });

  it("never grows a slice of 0 (yield at every check)", async () => {
    const clock = fakeLoop(() => 0);
    const turns = new Turns(0, clock);
    await turns.next();
    await turns.next();
    expect(turns.rows(1000)).toBe(1000);
    expect(slice(turns, clock, ITEM_MS)).toBe(64);
  });
});
