// `vane serve` as a user starts it (node bin/vane.js, the built dist/), for the benches that run
// the whole CLI (the soaks, the PostgreSQL outage): ready once its banner is complete ("Stop with
// Ctrl-C.", serve-banner.ts), the URL and the first run's keys read from that banner; stopped with
// SIGTERM.
// (bench/http/vane-cli.ts is the scale-out phase's: pinned, with workers, killed like a crash.)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { bannerOf } from "./serve-banner.js";

const ROOT = new URL("../", import.meta.url);

export interface CliServeOptions {
  /** Flags after `serve --port 0 --data DIR --log-level warn`. */
  readonly args?: readonly string[];
  /** The data folder; a temporary one, deleted by stop(), when absent. */
  readonly dataDir?: string;
  /** Where the server's output goes once it is ready (its stderr from the start); this process's stderr when absent. */
  readonly log?: Writable;
}

export interface CliServer {
  readonly url: string;
  readonly dataDir: string;
  /** The first run's key printed after `label` in the banner ("publishable key", "server-side key"). */
  key(label: string): string;
  /** One number from the server's vane.db (SQLite), read while it runs. */
  count(sql: string): number;
  /** SIGTERM, then resolves once it exited (and its temporary data folder is gone). */
  stop(): Promise<void>;
}

export async function serveCli(options: CliServeOptions = {}): Promise<CliServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "vane-bench-serve-"));
  const log = options.log ?? process.stderr;
  // --log-level warn: no line per request.
  const argv = ["bin/vane.js", "serve", "--port", "0", "--data", dataDir, "--log-level", "warn", ...(options.args ?? [])];
  const child = spawn(process.execPath, argv, { cwd: fileURLToPath(ROOT) });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  child.stderr.pipe(log, { end: false });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  let banner: string;
  try {
    banner = await bannerOf(child);
  } catch (error) {
    await stop();
    throw error;
  }
  child.stdout.pipe(log, { end: false });
  const after = (label: string) => {
    const found = new RegExp(`${label}\\s+(\\S+)`).exec(banner)?.[1];
    if (found === undefined) throw new Error(`no "${label}" in vane serve's banner:\n${banner}`);
    return found;
  };
  return {
    url: after("is listening on"),
    dataDir,
    key: after,
    count(sql) {
      // Read-write: a read-only connection cannot open a WAL database whose -shm it may not create.
      const db = new Database(join(dataDir, "vane.db"), { fileMustExist: true, timeout: 5_000 });
      try {
        return db.prepare<[], number>(sql).pluck().get()!;
      } finally {
        db.close();
      }
    },
    stop,
  };
}
