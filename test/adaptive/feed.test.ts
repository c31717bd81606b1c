// The learner's feed (feed.ts) over many runs, one per commit as under decide: taken in order
// across pages that end inside a run, past the point where the runs taken are let go, with runs
// fed out of order, a gap, and a position the learner skipped to.
import { describe, expect, it } from "vitest";
import { Feed } from "../../src/adaptive/feed.js";
import type { SequencedEvent } from "../../src/store/types.js";
import { LearnerLog } from "./learner-log.js";

const log = new LearnerLog();

/** One commit: seqs first..last, each a decision. */
function commit(feed: Feed, first: number, last: number): void {
  const events: SequencedEvent[] = [];
  for (let seq = first; seq <= last; seq++) events.push({ seq, event: log.decision(`d${seq}`, seq % 3) });
  feed.listener(events, { first, last });
}

function takeAll(feed: Feed, from: number, limit: number): { seqs: number[]; through: number } {
  const seqs: number[] = [];
  let through = from;
  for (;;) {
    const page = feed.take(through, limit);
    if (!("events" in page) || page.through === through) return { seqs, through };
    for (const e of page.events) seqs.push(e.seq);
    through = page.through;
  }
}

describe("the learner's feed", () => {
  it("adds commits that follow on to one run: a commit the learner has no use for costs no run", () => {
    const feed = new Feed(() => 0);
    for (let seq = 1; seq <= 5000; seq++) feed.listener([], { first: seq, last: seq }); // resolves of no bandit's arm
    expect(feed.runsHeld).toBe(1);
    for (let seq = 5001; seq <= 7048; seq++) commit(feed, seq, seq); // a run holds up to 1,024 records
    expect(feed.runsHeld).toBe(2);
    expect(feed.backlog.seqs).toBe(7048);
    expect(takeAll(feed, 0, 500)).toEqual({ seqs: Array.from({ length: 2048 }, (_, i) => 5001 + i), through: 7048 });
    expect(feed.runsHeld).toBe(0);
  });

  it("hands over 5,000 one-event runs and 2,000 two-event runs in order, in pages that cut runs", () => {
    const feed = new Feed(() => 0);
    for (let seq = 1; seq <= 5000; seq++) commit(feed, seq, seq);
    for (let seq = 5001; seq <= 9000; seq += 2) commit(feed, seq, seq + 1);
    expect(feed.backlog).toEqual({ seqs: 9000, sinceMs: 0 });
    const { seqs, through } = takeAll(feed, 0, 333);
    expect(through).toBe(9000);
    expect(seqs).toEqual(Array.from({ length: 9000 }, (_, i) => i + 1));
    expect(feed.backlog).toEqual({ seqs: 0, sinceMs: undefined });
  });

  it("puts a run fed out of order in its place, reports a gap, and skips what the learner read elsewhere", () => {
    const feed = new Feed(() => 0);
    for (let seq = 1; seq <= 3000; seq++) if (seq !== 2500) commit(feed, seq, seq);
    expect(takeAll(feed, 0, 100).through).toBe(2499);
    expect(feed.take(2499, 100)).toEqual({ next: 2501 }); // a gap: the learner scans it
    commit(feed, 2500, 2500); // late, but before the rest
    expect(takeAll(feed, 2499, 100)).toEqual({ seqs: Array.from({ length: 501 }, (_, i) => 2500 + i), through: 3000 });
    for (let seq = 3001; seq <= 4000; seq++) commit(feed, seq, seq);
    expect(takeAll(feed, 3500, 64)).toEqual({ seqs: Array.from({ length: 500 }, (_, i) => 3501 + i), through: 4000 });
    expect(feed.backlog.seqs).toBe(0);
  });
});
