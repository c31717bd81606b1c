// How the server's thread appends to the event log. Two ways, one behaviour:
// - WorkerLogWriter (`vane serve`): the log's connection lives on a worker thread
//   (writer-worker.ts), so neither the appends, their fsync nor another process's lock ever
//   blocks the event loop.
// - InlineLogWriter (the CLI, tests, ":memory:"): the same EventLog on the caller's connection,
//   group-committed on the caller's thread.
// Either way an acknowledged append is committed, so every connection's next read of the log
// finds it: reads need not wait for anything.
import { type MessagePort, MessageChannel, type Worker } from "node:worker_threads";
import type { Database } from "better-sqlite3";
import { startThread } from "../../threads.js";
import type { StoreHealth } from "../../types.js";
import { GroupCommit } from "../group-commit.js";
import type { Durability } from "../wal-sync.js";
import { EventLog, type LogAppend, MAX_GROUP_EVENTS } from "./event-log.js";
import { type AppendInput, type Answer, type AppendItem, type FromWriter, type ToWriter, type WriteFailure, type WriterOptions } from "./protocol.js";
import { SharedRow, mayShareRow, shareOf } from "./shared-row.js";

export interface LogWriter {
  append(input: AppendInput): Promise<LogAppend>;
  /** A port fed each committed batch, off this thread (EventStore.committedFeed); only a writer thread has one. */
  committedFeed?(): MessagePort | undefined;
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

  async append(input: AppendInput): Promise<LogAppend> {
    try {
      const { row: _row, ...receipt } = await this.group.submit(input);
      this.writes.ok();
      return receipt;
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
  resolve(receipt: LogAppend): void;
  reject(error: Error): void;
}

/** An append of a shared row (shared-row.ts): its events are the row's from `offset`, `count` of them. */
interface Member extends Waiting {
  readonly offset: number;
  readonly count: number;
}

/** An append of this turn, or a row that consecutive appends share, waiting to be sent. */
interface Outgoing {
  readonly id: number;
  readonly sentAt: number;
  readonly input: AppendInput;
  /** Set once a second append joins: the first one's text is then no longer the row's. */
  row?: SharedRow;
}

export class WriteFailed extends Error {
  readonly code: string | undefined;
  constructor(failure: WriteFailure) {
    super(failure.message);
    this.name = "WriteFailed";
    this.code = failure.code;
  }
}

export class WorkerLogWriter implements LogWriter {
  private worker: Worker;
  private nextId = 1;
  /** By item id: its append, or the appends of its shared row. */
  private readonly waiting = new Map<number, Waiting | Member[]>();
  private readonly writes = new WriteHealth();
  private closing: Promise<void> | undefined;
  /** Appends of this turn of the event loop, sent together (protocol.ts). */
  private outbox: Outgoing[] = [];
  /** False from the thread's death until its replacement is ready: appends fail at once meanwhile. */
  private alive = true;

  constructor(private readonly options: WriterOptions) {
    // Appends posted before the thread is up wait in its port.
    this.worker = spawn(options);
    this.attach(this.worker);
  }

  append(input: AppendInput): Promise<LogAppend> {
    if (this.closing) return Promise.reject(new Error("the event log is closed"));
    if (!this.alive) return Promise.reject(new WriteFailed({ message: "the event log's writer thread is restarting" }));
    return new Promise<LogAppend>((resolve, reject) => {
      const last = this.outbox.at(-1);
      if (last !== undefined && mayShareRow(input) && this.share(last, input, resolve, reject)) return;
      const id = this.nextId++;
      this.waiting.set(id, { resolve, reject });
      if (this.outbox.length === 0) setImmediate(() => this.send());
      this.outbox.push({ id, sentAt: Date.now(), input });
    });
  }

  /** Adds `input` to the row of the turn's last append when they may share it; false when not. */
  private share(last: Outgoing, input: AppendInput, resolve: Waiting["resolve"], reject: Waiting["reject"]): boolean {
    let row = last.row;
    if (row === undefined) {
      if (!mayShareRow(last.input) || last.input.facts.newest !== input.facts.newest) return false;
      row = last.row = new SharedRow(input.facts.newest);
      const first = this.waiting.get(last.id) as Waiting;
      this.waiting.set(last.id, [{ ...first, offset: row.add(last.input), count: last.input.count }]);
    } else if (!row.takes(input)) {
      return false;
    }
    (this.waiting.get(last.id) as Member[]).push({ resolve, reject, offset: row.add(input), count: input.count });
    return true;
  }

  /** A feed lasts as long as this writer's thread: after a respawn the consumer reads the log until it asks again. */
  committedFeed(): MessagePort | undefined {
    if (this.closing || !this.alive) return undefined;
    const { port1, port2 } = new MessageChannel();
    this.worker.postMessage({ type: "feed", port: port1 } satisfies ToWriter, [port1]);
    return port2;
  }

  health(): StoreHealth {
    return this.writes.state;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.worker.once("exit", () => resolve());
      this.send();
      this.worker.postMessage({ type: "close" } satisfies ToWriter);
    });
    return this.closing;
  }

  private send(): void {
    if (this.outbox.length === 0) return;
    const items = this.outbox.map(({ id, sentAt, input, row }): AppendItem => {
      const { text, format, count, facts } = row?.pieces() ?? input;
      // Named, not spread: one object of a fixed shape per item.
      return { id, sentAt, text, format, count, facts };
    });
    this.outbox = [];
    this.worker.postMessage({ type: "append", items } satisfies ToWriter);
  }

  private attach(worker: Worker): void {
    worker.on("message", (message: FromWriter) => this.receive(message));
    worker.on("error", (error) => this.lost(error));
    worker.on("exit", (code) => {
      if (this.closing) return;
      this.lost(new Error(`the event log's writer thread exited (code ${code})`));
    });
  }

  private receive(message: FromWriter): void {
    switch (message.type) {
      case "answers":
        for (const one of message.answers) this.answered(one);
        return;
      case "ready":
      case "closed":
        return;
    }
  }

  private answered(one: Answer): void {
    const waiting = this.waiting.get(one.id);
    this.waiting.delete(one.id);
    if (waiting === undefined) return;
    if ("receipt" in one) {
      this.writes.ok();
      if (!Array.isArray(waiting)) waiting.resolve(one.receipt);
      else for (const member of waiting) member.resolve(shareOf(one.receipt, member.offset, member.count));
    } else {
      this.writes.failed();
      const error = new WriteFailed(one.error);
      if (!Array.isArray(waiting)) waiting.reject(error);
      else for (const member of waiting) member.reject(error);
    }
  }

  /**
   * The thread died (a bug, or out of memory): the appends it held may or may not have committed,
   * so they fail (the sender retries; event ids make that safe) and a new thread takes over.
   */
  private lost(error: Error): void {
    if (!this.alive) return;
    this.alive = false;
    this.writes.failed();
    for (const waiting of this.waiting.values()) for (const one of Array.isArray(waiting) ? waiting : [waiting]) one.reject(error);
    this.waiting.clear();
    this.outbox = [];
    this.worker.removeAllListeners();
    // A pause first: a thread that dies at start would otherwise be respawned in a tight loop.
    setTimeout(() => {
      this.worker = spawn(this.options);
      this.attach(this.worker);
      this.alive = true;
    }, RESPAWN_PAUSE_MS).unref();
  }
}

const RESPAWN_PAUSE_MS = 500;

function spawn(options: WriterOptions): Worker {
  return startThread(new URL("./writer-worker.js", import.meta.url), options);
}
