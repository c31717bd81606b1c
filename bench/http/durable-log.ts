// The hello-world's durable write, for the baselines that bound Vane's durable rows: each
// request's body appended to one file and answered once an fdatasync covers it. Bodies that arrive
// while a sync runs share the next one (a group commit, as Vane's writer does); the write and the
// sync run on libuv's threads, as Vane's run on its writer thread.
import { type FileHandle, open } from "node:fs/promises";

/** What the log needs of a file (a FileHandle opened for appending). */
export type AppendOnlyFile = Pick<FileHandle, "write" | "datasync" | "close">;

export class DurableLog {
  private waiting: { readonly text: string; readonly done: () => void; readonly failed: (error: unknown) => void }[] = [];
  private flushing = false;

  constructor(private readonly file: AppendOnlyFile) {}

  static async open(path: string): Promise<DurableLog> {
    return new DurableLog(await open(path, "a"));
  }

  /** Resolves once `text` is written and synced. */
  append(text: string): Promise<void> {
    return new Promise((done, failed) => {
      this.waiting.push({ text, done, failed });
      if (!this.flushing) void this.flush();
    });
  }

  close(): Promise<void> {
    return this.file.close();
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.waiting.length > 0) {
      const group = this.waiting;
      this.waiting = [];
      try {
        await this.file.write(`${group.map((entry) => entry.text).join("\n")}\n`);
        await this.file.datasync();
        for (const entry of group) entry.done();
      } catch (error) {
        for (const entry of group) entry.failed(error);
      }
    }
    this.flushing = false;
  }
}
