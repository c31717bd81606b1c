// How the server's thread appends to the event log. Two ways, one behaviour:
// - WorkerLogWriter (`vane serve`): the log's connection lives on a worker thread
//   (writer-worker.ts), so neither the appends, their fsync, deriving the per-event table nor
//   another process's lock ever blocks the event loop.
// - InlineLogWriter (the CLI, tests, ":memory:"): the same EventLog on the caller's connection,
//   group-committed and derived on the caller's thread.
// Either way, reads through this process's event store wait until the per-event table holds
// what this writer acknowledged (read your writes); other processes see the table as derived.
import { type MessagePort, MessageChannel, type Worker } from "node:worker_threads";
import type { Database } from "better-sqlite3";
import { startThread } from "../../threads.js";
import type { StoreHealth } from "../../types.js";
import { GroupCommit } from "../group-commit.js";
import type { Durability } from "../wal-sync.js";
import { EventLog, type LogAppend, MAX_GROUP_EVENTS } from "./event-log.js";
import { LogDeriver } from "./log-deriver.js";
import { type AppendInput, type Answer, type AppendItem, type FromWriter, type ToWriter, type WriteFailure, type WriterOptions } from "./protocol.js";

export interface LogWriter {
  append(input: AppendInput): Promise<LogAppend>;
  /** Resolves once the per-event table holds every event this writer has acknowledged. */
  derived(): Promise<void>;
  /** A port fed each committed batch, off this thread (EventStore.committedFeed); only a writer thread has one. */
  committedFeed?(): MessagePort | undefined;
  /** "down" from a failed append until an append succeeds: what /health reports for writes. */
  health(): StoreHealth;
  /** Commits what is queued and closes. */
  close(): Promise<void>;
}

/** Tracks acknowledged and derived positions and wakes the readers waiting between them. */
class DerivedWaiters {
  private acked = 0;
  private through: number;
  private waiting: (() => void)[] = [];

  constructor(derivedThrough: number) {
    this.through = derivedThrough;
  }

  acknowledged(lastSeq: number): void {
    this.acked = Math.max(this.acked, lastSeq);
  }

  derived(through: number): void {
    this.through = Math.max(this.through, through);
    if (this.through < this.acked) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }

  wait(): Promise<void> {
    if (this.through >= this.acked) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }
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
  private readonly deriver: LogDeriver;
  private readonly writes = new WriteHealth();

  constructor(
    db: Database,
    durability: Durability,
    private readonly options: { readonly deriveOnRead: boolean } = { deriveOnRead: true },
  ) {
    this.log = new EventLog(db);
    this.group = new GroupCommit(db, {
      apply: (input) => this.log.append(input),
      afterGroup: () => this.log.groupEnded(),
      sizeOf: (input) => input.count,
      maxGroupSize: MAX_GROUP_EVENTS,
      durable: () => durability.sync(),
    });
    this.deriver = new LogDeriver(this.log, { derived: () => undefined, failed: () => undefined });
  }

  async append(input: AppendInput): Promise<LogAppend> {
    try {
      const { batch, row: _row, ...receipt } = await this.group.submit(input);
      this.writes.ok();
      if (batch) this.log.keep(batch);
      // Derived at once: inline is for the CLI and tests, where another connection reading the
      // table right after the answer should find the events, and no request path is at stake.
      if (receipt.stored > 0) this.deriver.drain(Number.POSITIVE_INFINITY);
      return receipt;
    } catch (error) {
      this.writes.failed();
      throw error;
    }
  }

  /** Derives what the log holds beyond the table first: a CLI reading after a server was killed sees every stored event. */
  async derived(): Promise<void> {
    if (this.options.deriveOnRead) this.deriver.drain(Number.POSITIVE_INFINITY);
  }

  health(): StoreHealth {
    return this.writes.state;
  }

  async close(): Promise<void> {
    this.flush();
  }

  /** Commits the queued appends and derives them, synchronously (before the connection closes). */
  flush(): void {
    this.group.flush();
    this.deriver.drain(Number.POSITIVE_INFINITY);
    this.deriver.stop();
  }
}


interface Waiting {
  resolve(receipt: LogAppend): void;
  reject(error: Error): void;
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
  private readonly waiting = new Map<number, Waiting>();
  private readonly waiters: DerivedWaiters;
  private readonly writes = new WriteHealth();
  private closing: Promise<void> | undefined;
  /** Appends of this turn of the event loop, sent together (protocol.ts). */
  private outbox: AppendItem[] = [];
  /** False from the thread's death until its replacement is ready: appends fail at once meanwhile. */
  private alive = true;

  /** `db`: the caller's connection to the same file, to read where the derived table stands. */
  constructor(
    private readonly options: WriterOptions,
    db: Database,
  ) {
    this.waiters = new DerivedWaiters(new EventLog(db).derivedThrough());
    // Appends posted before the thread is up wait in its port.
    this.worker = spawn(options);
    this.attach(this.worker);
  }

  append(input: AppendInput): Promise<LogAppend> {
    if (this.closing) return Promise.reject(new Error("the event log is closed"));
    if (!this.alive) return Promise.reject(new WriteFailed({ message: "the event log's writer thread is restarting" }));
    const id = this.nextId++;
    return new Promise<LogAppend>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.outbox.length === 0) setImmediate(() => this.send());
      this.outbox.push({ id, sentAt: Date.now(), ...input });
    });
  }

  derived(): Promise<void> {
    return this.waiters.wait();
  }

  /** A feed lasts as long as this writer's thread: after a respawn the consumer reads the table until it asks again. */
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
    this.worker.postMessage({ type: "append", items: this.outbox } satisfies ToWriter);
    this.outbox = [];
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
      case "derived":
        this.waiters.derived(message.through);
        return;
      case "derive-failed":
      case "ready":
      case "closed":
        return;
    }
  }

  private answered(one: Answer): void {
    const waiting = this.waiting.get(one.id);
    this.waiting.delete(one.id);
    if ("receipt" in one) {
      this.writes.ok();
      this.waiters.acknowledged(one.receipt.lastSeq);
      waiting?.resolve(one.receipt);
    } else {
      this.writes.failed();
      waiting?.reject(new WriteFailed(one.error));
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
    for (const waiting of this.waiting.values()) waiting.reject(error);
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
