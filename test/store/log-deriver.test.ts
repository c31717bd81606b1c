// The deriver's pace: a small backlog waits a little and is copied in one transaction; a backlog
// of a whole step is copied at once. Observed through the deriver's own `derived` reports.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DB_FILE_NAME, openSqliteStores } from "../../src/store/sqlite/index.js";
import { EventLog } from "../../src/store/sqlite/writer/event-log.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import { DERIVE_DELAY_MS, DERIVE_EVENTS, LogDeriver } from "../../src/store/sqlite/writer/log-deriver.js";
import { makeBatch } from "./fixtures.js";

const dirs: string[] = [];
const dbs: Database.Database[] = [];

afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh store's file on a connection of our own, with a log and a deriver that records each report. */
function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-deriver-"));
  dirs.push(dir);
  openSqliteStores({ dataDir: dir }).close();
  const db = new Database(path.join(dir, DB_FILE_NAME));
  dbs.push(db);
  const log = new EventLog(db);
  const reports: number[] = [];
  const deriver = new LogDeriver(log, { derived: (through) => reports.push(through), failed: (error) => { throw error; } });
  let n = 0;
  /** Appends one batch as the writer thread does (commit, keep, tell the deriver); returns the log's end. */
  const append = (size: number): number => {
    const { batch, lastSeq } = db.transaction(() => log.append(encodeLogRow(makeBatch(`b${n++}`, size))))();
    log.groupEnded();
    if (batch) log.keep(batch);
    deriver.appended(lastSeq);
    return lastSeq;
  };
  const eventRows = () => db.prepare("SELECT count(*) FROM events").pluck().get() as number;
  return { deriver, append, reports, eventRows };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("LogDeriver", () => {
  it("copies the small batches appended within its delay in one transaction, after the delay", async () => {
    const { deriver, append, reports, eventRows } = setup();
    let end = 0;
    for (let i = 0; i < 5; i++) {
      end = append(2);
      await turn();
    }
    expect(eventRows()).toBe(0); // still waiting for more
    // Polled rather than slept on: a loaded machine may fire a longer sleep in the same timer phase as the delay.
    for (const started = Date.now(); eventRows() < 10 && Date.now() - started < 5_000; ) await sleep(DERIVE_DELAY_MS);
    expect(eventRows()).toBe(10);
    expect(reports).toEqual([end]); // one step for all five batches
    deriver.stop();
  });

  it("copies at once when the backlog fills a step", async () => {
    const { deriver, append, reports, eventRows } = setup();
    const end = append(DERIVE_EVENTS);
    await turn();
    await turn();
    expect(eventRows()).toBe(DERIVE_EVENTS);
    expect(reports).toEqual([end]);
    deriver.stop();
  });

  it("copies nothing after stop, delay or not", async () => {
    const { deriver, append, eventRows } = setup();
    append(3);
    deriver.stop();
    await sleep(DERIVE_DELAY_MS * 2 + 20);
    expect(eventRows()).toBe(0);
  });
});
