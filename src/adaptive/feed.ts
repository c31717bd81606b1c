// The learner's feed: the events this process just committed (EventStore.onCommitted), turned into
// the learner's compact records straight from the objects the server built (no JSON;
// store/learning-records.ts, the same records the embedded store's scan reads back), kept as
// runs of consecutive seqs. The learner takes from it only when it continues exactly from its
// position; anything else (other processes' events, a restart, a dropped run) it scans.
//
// A commit whose seqs follow on from the last run's is added to that run (up to RUN_RECORDS
// records): a commit per request (decide, resolve) then costs its records and nothing else, and a
// commit the learner has no use for (a resolve of no bandit's arm) costs nothing.
import { learningRecord } from "../store/learning-records.js";
import type { CommittedSpan, LearningEvent, SequencedEvent } from "../store/types.js";

/** Seqs held at most while the learner does not take them (a stalled learner); past it the feed starts over. */
export const FEED_LIMIT = 200_000;
/** Records a run takes from the commits that follow on; the taken part of a run is let go only with the whole run. */
const RUN_RECORDS = 1024;

interface Run {
  /** Every seq in [from, to] was committed, and `records` are the learner's among them, from `at`. */
  from: number;
  to: number;
  readonly records: LearningEvent[];
  at: number;
}

export interface FedPage {
  readonly events: LearningEvent[];
  readonly through: number;
}

export class Feed {
  /**
   * The runs held are runs[head..], in seq order. Taken from the head by moving `head`: a splice at
   * the front moves every run behind it, and a step taking its thousands of runs (one per request
   * under decide) held the event loop up to 33 ms doing so.
   */
  private runs: Run[] = [];
  private head = 0;
  private held = 0;
  /** When the oldest run held came (ms); undefined while none is held. */
  private since: number | undefined;
  /** Runs dropped because the learner fell behind. */
  dropped = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Seqs held, and since when (undefined: none): what the learner's step scheduling weighs. */
  get backlog(): { readonly seqs: number; readonly sinceMs: number | undefined } {
    return { seqs: this.held, sinceMs: this.since };
  }

  /** Runs held (tests: commits that follow on share one). */
  get runsHeld(): number {
    return this.runs.length - this.head;
  }

  /** The listener for EventStore.onCommitted, handed only what `learnable` accepts. */
  readonly listener = (events: readonly SequencedEvent[], span: CommittedSpan): void => {
    if (span.last < span.first) return;
    try {
      const records = this.runFor(span, events.length).records;
      for (let i = 0; i < events.length; i++) {
        const record = learningRecord(events[i]!);
        if (record) records.push(record);
      }
    } catch {
      // Never the append's failure: an event the feed cannot take is left to the scan.
      this.clear();
      this.since = undefined;
    }
  };

  /**
   * Up to `limit` records from the seq after `position`, when the feed holds it; undefined when it
   * does not (a gap), with `next` the first seq it holds past the position, if any.
   */
  take(position: number, limit: number): FedPage | { readonly next: number | undefined } {
    this.skipThrough(position);
    const head = this.first();
    if (!head || head.from !== position + 1) return { next: head?.from };
    const events: LearningEvent[] = [];
    let through = position;
    for (let run = this.first(); run !== undefined && run.from === through + 1 && events.length < limit; run = this.first()) {
      const take = Math.min(run.records.length - run.at, limit - events.length);
      for (let i = 0; i < take; i++) events.push(run.records[run.at + i]!);
      run.at += take;
      if (run.at === run.records.length) {
        through = run.to;
        this.dropFirst();
      } else {
        through = run.records[run.at - 1]!.seq;
        this.held -= through + 1 - run.from;
        run.from = through + 1;
      }
    }
    return { events, through };
  }

  /** The run a commit's records go to: the last one when the commit follows on from it and it has room, else a new one in its place. */
  private runFor(span: CommittedSpan, records: number): Run {
    if (this.held + (span.last - span.first + 1) > FEED_LIMIT) this.clear();
    if (this.head === this.runs.length) this.since = this.now();
    this.held += span.last - span.first + 1;
    const last = this.runs.length > this.head ? this.runs[this.runs.length - 1]! : undefined;
    if (last !== undefined && last.to + 1 === span.first && last.records.length + records <= RUN_RECORDS) {
      last.to = span.last;
      return last;
    }
    const run: Run = { from: span.first, to: span.last, records: [], at: 0 };
    // Commits are fed in order; one out of order goes to its place.
    let at = this.runs.length;
    while (at > this.head && this.runs[at - 1]!.from > run.from) at--;
    this.runs.splice(at, 0, run);
    return run;
  }

  private first(): Run | undefined {
    return this.runs[this.head];
  }

  private clear(): void {
    this.dropped += this.runs.length - this.head;
    this.runs = [];
    this.head = 0;
    this.held = 0;
  }

  private skipThrough(position: number): void {
    for (let run = this.first(); run !== undefined && run.to <= position; run = this.first()) this.dropFirst();
    const head = this.first();
    if (head && head.from <= position) {
      while (head.at < head.records.length && head.records[head.at]!.seq <= position) head.at++;
      this.held -= position + 1 - head.from;
      head.from = position + 1;
    }
  }

  private dropFirst(): void {
    const run = this.runs[this.head]!;
    this.held -= run.to - run.from + 1;
    this.head++;
    if (this.head === this.runs.length) {
      this.runs = [];
      this.head = 0;
      this.since = undefined;
    } else if (this.head >= 1024 && this.head * 2 >= this.runs.length) {
      // The taken runs go once they are half the array: each run is moved at most once more on average.
      this.runs = this.runs.slice(this.head);
      this.head = 0;
    }
  }
}
