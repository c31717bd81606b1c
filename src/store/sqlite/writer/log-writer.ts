// How the server's thread appends to the event log. Two ways, one behaviour:
// - WorkerLogWriter (`vane serve`): the log's connection lives on a worker thread
//   (writer-worker.ts), so neither the appends, their fsync nor another process's lock ever
//   blocks the event loop.
// - InlineLogWriter (the CLI, tests, ":memory:"): the same EventLog on the caller's connection,
//   group-committed on the caller's thread.
// Either way an acknowledged append is committed, so every connection's next read of the log
// finds it: reads need not wait for anything.
import type { Worker } from "node:worker_threads";
import type { Database } from "better-sqlite3";
import { settleWithin } from "../../../lib/settle-within.js";
import { ThreadHeld } from "../../held-thread.js";
import { startThread } from "../../threads.js";
import type { AppendReceipt, StoreHealth } from "../../types.js";
import { GroupCommit } from "../group-commit.js";
import type { Durability } from "../wal-sync.js";
import { EventLog, MAX_GROUP_EVENTS } from "./event-log.js";
import { type AppendInput, type AppendItem, RECEIPT_NUMBERS, type FromWriter, type ToWriter, type WriteFailure, type WriterData, type WriterOptions } from "./protocol.js";
import { type RingMemory, RingWriter, type RowText, ringMemory } from "./append-ring.js";
import type { RowFacts } from "./row-facts.js";

/** An append as the event store gives it: its row (a PiecesRow's text is written where it goes, not joined), its event count and facts. */
export interface WriterAppend {
  readonly row: RowText;
  readonly count: number;
  readonly facts: RowFacts;
  /** Told of the commit before the append's promise resolves; never of a failure. */
  readonly onCommit?: CommitHook;
}

/**
 * What the event store feeds its commit listeners through, told of the seqs an append committed
 * (LogAppend's) as numbers: no promise or receipt object of its own per append. What it throws is
 * its own.
 */
export interface CommitHook {
  committed(firstSeq: number, lastSeq: number, stored: number, skipped: readonly number[]): void;
}

/** Tells `hook` of a commit, keeping its failure from the writer (the append committed). */
function tell(hook: CommitHook | undefined, firstSeq: number, lastSeq: number, stored: number, skipped: readonly number[]): void {
  if (hook === undefined) return;
  try {
    hook.committed(firstSeq, lastSeq, stored, skipped);
  } catch {
    // The hook's own: its listeners read the log instead.
  }
}

export interface LogWriter {
  /** Answers what the event store's append answers (its firstSeq and skipped go to the append's CommitHook). */
  append(input: WriterAppend): Promise<AppendReceipt>;
  /** "down" from a failed append until an append succeeds: what /health reports for writes. */
  health(): StoreHealth;
  /** Commits what is queued and closes. */
  close(): Promise<void>;
}

class WriteHealth {
  private failing = false;
  ok(): void {
    this.failing = false;
  }
  failed(): void {
    this.failing = true;
  }
  get state(): StoreHealth {
    return this.failing ? "down" : "ok";
  }
}

export class InlineLogWriter implements LogWriter {
  private readonly log: EventLog;
  private readonly group: GroupCommit<AppendInput, ReturnType<EventLog["append"]>>;
  private readonly writes = new WriteHealth();

  constructor(db: Database, durability: Durability) {
    this.log = new EventLog(db);
    this.group = new GroupCommit(db, {
      apply: (input) => this.log.append(input),
      afterGroup: () => this.log.groupEnded(),
      oneStatement: EventLog.oneStatement,
      sizeOf: (input) => input.count,
      maxGroupSize: MAX_GROUP_EVENTS,
      durable: () => durability.sync(),
    });
  }

  async append({ row, count, facts, onCommit }: WriterAppend): Promise<AppendReceipt> {
    try {
      const { firstSeq, lastSeq, stored, duplicates, skipped } = await this.group.submit({ text: row.text, format: row.format, count, facts });
      this.writes.ok();
      tell(onCommit, firstSeq, lastSeq, stored, skipped);
      return { lastSeq, stored, duplicates };
    } catch (error) {
      this.writes.failed();
      throw error;
    }
  }

  health(): StoreHealth {
    return this.writes.state;
  }

  async close(): Promise<void> {
    this.flush();
  }

  /** Commits the queued appends, synchronously (before the connection closes). */
  flush(): void {
    this.group.flush();
  }
}

interface Waiting {
  readonly resolve: (receipt: AppendReceipt) => void;
  readonly reject: (error: Error) => void;
  readonly onCommit: CommitHook | undefined;
}

/**
 * The functions that settle the promise being made, taken by a shared executor: a closure per
 * append for them (and its context) was ~60 bytes of each resolve's allocation.
 */
let resolveNext: Waiting["resolve"] = () => undefined;
let rejectNext: Waiting["reject"] = () => undefined;
const takeSettlers = (resolve: Waiting["resolve"], reject: Waiting["reject"]): void => {
  resolveNext = resolve;
  rejectNext = reject;
};

export class WriteFailed extends Error {
  readonly code: string | undefined;
  constructor(failure: WriteFailure) {
    super(failure.message);
    this.name = "WriteFailed";
    this.code = failure.code;
  }
}

/**
 * How long close() lets the thread commit what is queued before it terminates it: one group's
 * wait for another process's lock (DEFAULT_BUSY_TIMEOUT_MS, 5 s) and its fsync. A thread held in
 * a native call (an fsync on a hung disk) must not hold the server's stop for ever.
 */
export const WRITER_CLOSE_MS = 7_000;
/** How long close() then waits for terminate(), which a thread held in a native call keeps pending for ever. */
export const WRITER_TERMINATE_MS = 3_000;

/** close()'s bounds, milliseconds (tests shorten them). */
export interface WriterTiming {
  readonly closeMs?: number;
  readonly terminateMs?: number;
}

/**
 * Appends cross to the thread through a ring in shared memory (append-ring.ts), published once a
 * turn; an append whose facts are not numbers, or whose text is larger than half the ring,
 * crosses as a message (its stand-in keeps its place in the ring). Answers come back as messages,
 * one per group.
 */
export class WorkerLogWriter implements LogWriter {
  private worker: Worker;
  private ring: RingWriter;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private readonly writes = new WriteHealth();
  private closing: Promise<void> | undefined;
  /** Appends of this turn that cross as messages (protocol.ts): their stand-ins are in the ring. */
  private outbox: AppendItem[] = [];
  /** Appends waiting for the ring's room, in order, their texts joined; every later append waits behind them. */
  private backlog: AppendItem[] = [];
  /** Whether this turn's records are yet to be published. */
  private unpublished = false;
  /** False from the thread's death until its replacement is ready: appends fail at once meanwhile. */
  private alive = true;
  /** The replacement thread's start, pending while `alive` is false. */
  private respawn: ReturnType<typeof setTimeout> | undefined;
  private readonly publish = (): void => this.endTurn();

  /** `entry`: the thread's code (tests stand in one that never ends). */
  constructor(
    private readonly options: WriterOptions,
    private readonly timing: WriterTiming = {},
    private readonly entry = new URL("./writer-worker.js", import.meta.url),
  ) {
    // Appends written before the thread is up wait in the ring.
    const memory = ringMemory(options.ringBytes);
    this.ring = new RingWriter(memory);
    this.worker = spawn(entry, options, memory);
    this.attach(this.worker);
  }

  append(input: WriterAppend): Promise<AppendReceipt> {
    if (this.closing) return Promise.reject(new Error("the event log is closed"));
    if (!this.alive) return Promise.reject(new WriteFailed({ message: "the event log's writer thread is restarting" }));
    const appended = new Promise<AppendReceipt>(takeSettlers);
    const resolve = resolveNext;
    const reject = rejectNext;
    const id = this.nextId++;
    this.waiting.set(id, { resolve, reject, onCommit: input.onCommit });
    try {
      const sentAt = Date.now();
      const { row, count, facts } = input;
      if (this.backlog.length === 0 && this.put(id, sentAt, row, count, facts)) {
        this.turnEnds();
      } else {
        // No room: it waits, its text joined (a PiecesRow's pieces are the next request's).
        this.backlog.push({ id, sentAt, text: row.text, format: row.format, count, facts });
        if (this.backlog.length === 1) this.askRoom();
      }
    } catch (error) {
      this.waiting.delete(id);
      reject(error as Error);
    }
    return appended;
  }

  /** Writes an append into the ring, or its stand-in and its message; false when the ring has no room. */
  private put(id: number, sentAt: number, row: RowText, count: number, facts: RowFacts): boolean {
    if (facts.senders.length === 0 && facts.discovered.length === 0 && !this.ring.tooLarge(row, facts.newest)) {
      return this.ring.put(id, sentAt, row, count, facts.newest);
    }
    if (!this.ring.putStandIn(id)) return false;
    this.outbox.push({ id, sentAt, text: row.text, format: row.format, count, facts });
    return true;
  }

  private turnEnds(): void {
    if (this.unpublished) return;
    this.unpublished = true;
    setImmediate(this.publish);
  }

  private endTurn(): void {
    this.unpublished = false;
    this.ring.publish();
    if (this.outbox.length === 0) return;
    this.worker.postMessage({ type: "append", items: this.outbox } satisfies ToWriter);
    this.outbox = [];
  }

  /** The thread says when it has taken records (a "room" message); at once when the ring is empty. */
  private askRoom(): void {
    if (!this.ring.wantRoom()) setImmediate(() => this.room());
  }

  /** The ring has room: the backlog goes in, in order, as far as it fits. */
  private room(): void {
    if (!this.alive || this.closing) return;
    const backlog = this.backlog;
    let taken = 0;
    while (taken < backlog.length) {
      const item = backlog[taken]!;
      if (!this.put(item.id, item.sentAt, item, item.count, item.facts)) break;
      taken++;
    }
    if (taken === 0 && backlog.length === 0) return;
    backlog.splice(0, taken);
    this.turnEnds();
    if (backlog.length > 0) this.askRoom();
  }

  health(): StoreHealth {
    return this.writes.state;
  }

  /**
   * Commits what is queued, the backlog too (it follows the ring's records), and ends the thread.
   * Past closeMs it terminates the thread and rejects with how that went: the appends it had not
   * answered fail (as when it dies: they may have committed, and the sender's retry is deduplicated
   * by event id), and a ThreadHeld when terminate() too was still pending after terminateMs.
   */
  close(): Promise<void> {
    // Between a thread's death and its replacement there is no thread to wait for: its exit has
    // passed, and waiting on it held the server's stop for ever.
    if (!this.alive && this.closing === undefined) {
      clearTimeout(this.respawn);
      this.closing = Promise.resolve();
    }
    this.closing ??= this.closeWithin();
    return this.closing;
  }

  private async closeWithin(): Promise<void> {
    const worker = this.worker;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    this.endTurn();
    worker.postMessage({ type: "close", items: this.backlog } satisfies ToWriter);
    this.backlog = [];
    const closeMs = this.timing.closeMs ?? WRITER_CLOSE_MS;
    if ((await settleWithin(exited, closeMs)) === "settled") return;
    const unanswered = this.waiting.size;
    const ended = (await settleWithin(worker.terminate(), this.timing.terminateMs ?? WRITER_TERMINATE_MS)) === "settled";
    const what = `the event log's writer thread had not ended ${closeMs} ms after its close and was terminated; ${unanswered} unanswered appends failed`;
    const error = ended ? new Error(what) : new ThreadHeld("the event log's writer", `${what}, but the thread had not ended when the close stopped waiting (held in a native call); the process's exit waits for it`);
    // A thread that never ends never says "exit" either (attach()): none waits for ever.
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
    throw error;
  }

  private attach(worker: Worker): void {
    worker.on("message", (message: FromWriter) => this.receive(message));
    worker.on("error", (error) => this.lost(error));
    worker.on("exit", (code) => {
      const error = new Error(`the event log's writer thread exited (code ${code})`);
      if (!this.closing) return this.lost(error);
      // Closed: every append was answered before the thread ended, but for a bug; none waits forever.
      for (const waiting of this.waiting.values()) waiting.reject(error);
      this.waiting.clear();
    });
  }

  private receive(message: FromWriter): void {
    switch (message.type) {
      case "answers": {
        const { receipts } = message;
        for (let i = 0; i < receipts.length; i += RECEIPT_NUMBERS) {
          this.committed(receipts[i]!, receipts[i + 1]!, receipts[i + 2]!, receipts[i + 3]!, receipts[i + 4]!, NONE);
        }
        for (const one of message.answers) {
          if ("receipt" in one) this.committed(one.id, one.receipt.firstSeq, one.receipt.lastSeq, one.receipt.stored, one.receipt.duplicates, one.receipt.skipped);
          else this.failed(one.id, one.error);
        }
        return;
      }
      case "room":
        this.room();
        return;
      case "ready":
      case "closed":
        return;
    }
  }

  private committed(id: number, firstSeq: number, lastSeq: number, stored: number, duplicates: number, skipped: readonly number[]): void {
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    if (waiting === undefined) return;
    this.writes.ok();
    tell(waiting.onCommit, firstSeq, lastSeq, stored, skipped);
    waiting.resolve({ lastSeq, stored, duplicates });
  }

  private failed(id: number, error: WriteFailure): void {
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    if (waiting === undefined) return;
    this.writes.failed();
    waiting.reject(new WriteFailed(error));
  }

  /**
   * The thread died (a bug, or out of memory): the appends it held may or may not have committed,
   * so they fail (the sender retries; event ids make that safe) and a new thread takes over, with
   * a ring of its own (what the old one held is forgotten with those appends).
   */
  private lost(error: Error): void {
    if (!this.alive) return;
    this.alive = false;
    this.writes.failed();
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
    this.outbox = [];
    this.backlog = [];
    this.worker.removeAllListeners();
    // A pause first: a thread that dies at start would otherwise be respawned in a tight loop.
    this.respawn = setTimeout(() => {
      const memory = ringMemory(this.options.ringBytes);
      this.ring = new RingWriter(memory);
      this.worker = spawn(this.entry, this.options, memory);
      this.attach(this.worker);
      this.alive = true;
    }, RESPAWN_PAUSE_MS).unref();
  }
}

const RESPAWN_PAUSE_MS = 500;

const NONE: readonly never[] = Object.freeze([]);

function spawn(entry: URL, options: WriterOptions, ring: RingMemory): Worker {
  return startThread(entry, { ...options, ring } satisfies WriterData);
}
