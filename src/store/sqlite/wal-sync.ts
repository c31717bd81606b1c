// Durability without blocking the event loop. With synchronous=FULL, SQLite fsyncs the WAL inside
// every commit, and better-sqlite3 runs that fsync on the event loop: ~2.5 ms here during which no
// request is served. Instead the connection commits with synchronous=NORMAL (the WAL is written,
// not synced) and this syncer fsyncs the WAL file on libuv's thread pool; a write is acknowledged
// once an fsync that started after its commit has finished. Every frame committed before that
// fsync is then on disk, which is what FULL promises. Commits go on meanwhile, and the writes of
// one fsync's wait share the next one, as group commit shares a transaction.
import { closeSync, existsSync, fdatasyncSync, openSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import type { WhenWritable } from "./when-writable.js";

export interface Durability {
  /** Resolves once every write committed before the call is on disk. */
  sync(): Promise<void>;
  /** The same, at once, for close(). */
  syncNow(): void;
  close(): void;
  /**
   * Runs a synchronous write once the write lock is free (without blocking the event loop while
   * another connection holds it: when-writable.ts), then resolves once it is on disk.
   */
  commit<T>(write: () => T): Promise<T>;
  /** The same wait for the lock, without waiting for the disk. */
  write<T>(write: () => T): Promise<T>;
}

/** For an in-memory database, or synchronous=NORMAL: nothing to wait for. */
export const NO_SYNC: Durability = {
  sync: () => Promise.resolve(),
  syncNow: () => undefined,
  close: () => undefined,
  commit: async (write) => write(),
  write: async (write) => write(),
};

/** The same durability, with writes that wait for the lock as `whenWritable` says. */
export function gated(durability: Durability, whenWritable: WhenWritable): Durability {
  return {
    sync: () => durability.sync(),
    syncNow: () => durability.syncNow(),
    close: () => durability.close(),
    commit: async (write) => {
      const result = await whenWritable(write);
      await durability.sync();
      return result;
    },
    write: (write) => whenWritable(write),
  };
}

type Fsync = () => Promise<void>;

export class WalSync implements Durability {
  private handle: Promise<FileHandle> | undefined;
  /** The fsync running now: it may have started before the caller's commit. */
  private running: Promise<void> | undefined;
  /** The fsync that starts when `running` ends: it covers every commit made until then. */
  private next: Promise<void> | undefined;

  /** `fsync` is for tests; by default the WAL file beside the database is opened and synced. */
  constructor(
    private readonly walPath: string,
    private readonly fsync: Fsync = () => this.fsyncWal(),
  ) {}

  async write<T>(write: () => T): Promise<T> {
    return write();
  }

  async commit<T>(write: () => T): Promise<T> {
    const result = write();
    await this.sync();
    return result;
  }

  sync(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) return this.start();
    const after = this.running.then(
      () => undefined,
      () => undefined,
    );
    this.next = after.then(() => {
      this.next = undefined;
      return this.start();
    });
    return this.next;
  }

  syncNow(): void {
    if (!existsSync(this.walPath)) return;
    const fd = openSync(this.walPath, "r");
    try {
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Closes the WAL handle once the fsyncs under way have finished. */
  close(): void {
    const handle = this.handle;
    this.handle = undefined;
    if (!handle) return;
    void Promise.allSettled([this.running, this.next])
      .then(() => handle)
      .then((h) => h.close())
      .catch(() => undefined);
  }

  private start(): Promise<void> {
    const run = this.fsync().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async fsyncWal(): Promise<void> {
    // The WAL exists once the connection has written; SQLite keeps the same file (and inode)
    // while a connection is open, rewinding it after checkpoints rather than replacing it.
    this.handle ??= open(this.walPath, "r");
    try {
      // fdatasync, as SQLite itself uses on Linux: the frames and the file's length reach the
      // disk; timestamps don't need to.
      await (await this.handle).datasync();
    } catch (error) {
      this.handle = undefined;
      throw error;
    }
  }
}
