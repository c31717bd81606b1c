// The log writer's thread. It owns the connection that appends to the event log, so a write lock
// held by another process (the CLI writing to the same file) blocks this thread, never the
// server's event loop: config, health and reads go on, and the writes that need the lock wait
// for it (busy_timeout) and then fail, which the server answers with the contract's 503.
// Commits are synchronous=FULL here: fsynced before the answer, off the event loop.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { GroupCommit } from "../group-commit.js";
import { EventLog, MAX_GROUP_EVENTS } from "./event-log.js";
import { type AppendInput, type AppendItem, type Answer, type FromWriter, type ToWriter, type WriterData, failureOf } from "./protocol.js";
import { type InlineRecord, RingReader } from "./append-ring.js";
import { SharedRow, aloneRow, mayShareRow, shareOf } from "./shared-row.js";

const port = parentPort!;
const options = workerData as WriterData;
const send = (message: FromWriter): void => port.postMessage(message);

const db = new Database(options.path, { timeout: options.busyTimeoutMs });
db.pragma("synchronous = FULL");
const log = new EventLog(db);
const group = new GroupCommit<AppendInput, ReturnType<EventLog["append"]>>(db, {
  apply: (input) => log.append(input),
  afterGroup: () => log.groupEnded(),
  oneStatement: EventLog.oneStatement,
  sizeOf: (input) => input.count,
  maxGroupSize: MAX_GROUP_EVENTS,
  lockWaitMs: options.busyTimeoutMs,
  waitAtMost: (ms) => db.pragma(`busy_timeout = ${Math.round(ms)}`),
});

port.on("message", (message: ToWriter) => {
  if (message.type === "close") {
    take();
    for (const item of message.items) submit(item, item.sentAt, [item.id], NO_OFFSETS);
    group.flush();
    closed = true;
    ring.wake();
    // After the commits' answers (their promises' callbacks run before any immediate), not before: they go with the port.
    setImmediate(() => {
      deliver();
      db.close();
      send({ type: "closed" });
      port.close();
    });
    return;
  }
  for (const item of message.items) arrived.set(item.id, item);
  look();
});

const ring = new RingReader(options.ring);
/** Appends that crossed as messages, by id, until the ring's reading reaches their stand-ins. */
const arrived = new Map<number, AppendItem>();
let closed = false;
/** Whether the reading stopped at a stand-in whose message has not come. */
let stalled = false;
let waiting = false;
let scheduled = false;

/** Takes what the ring holds, then waits for more once the groups it gave have run. */
function look(): void {
  take();
  if (closed || stalled || scheduled) return;
  scheduled = true;
  setImmediate(sleep);
}

function sleep(): void {
  scheduled = false;
  if (closed || stalled || waiting) return;
  const published = ring.whenPublished();
  if (published === undefined) return look();
  waiting = true;
  void published.then(() => {
    waiting = false;
    look();
  });
}

/**
 * Submits the ring's records in order, consecutive ones that may share a log row (shared-row.ts)
 * as one, and frees their room. Their rows are their bytes copied out of the ring, never a string.
 */
function take(): void {
  stalled = false;
  let row: SharedRow | undefined;
  let first: InlineRecord | undefined;
  let sentAt = 0;
  const ids: number[] = [];
  const offsets: number[] = [];
  const endRow = (): void => {
    if (row === undefined) return;
    if (ids.length === 1) {
      // Alone after all: its text is the row's, one copy and no moves.
      offsets.length = 0;
      submit(aloneRow(first!), sentAt, ids.splice(0), NO_OFFSETS);
    } else submit(row.input(), sentAt, ids.splice(0), offsets.splice(0));
    row = first = undefined;
  };
  for (let record = ring.peek(); record !== undefined; record = ring.peek()) {
    if (record.kind === "message") {
      const item = arrived.get(record.id);
      if (item === undefined) {
        stalled = true;
        break;
      }
      arrived.delete(record.id);
      endRow();
      submit(item, item.sentAt, [item.id], NO_OFFSETS);
    } else if (!mayShareRow(record)) {
      endRow();
      submit(aloneRow(record), record.sentAt, [record.id], NO_OFFSETS);
    } else {
      if (row !== undefined && !row.takes(record)) endRow();
      if (row === undefined) {
        row = new SharedRow(record.bytes, record.newest);
        first = record;
        sentAt = record.sentAt;
      }
      offsets.push(row.add(record));
      ids.push(record.id);
    }
    ring.take();
  }
  endRow();
  if (ring.release()) send({ type: "room" });
}

/** Appends `input`, the row of the appends `ids` (their events from `offsets` on, when it is shared). */
function submit(input: AppendInput, sentAt: number, ids: readonly number[], offsets: readonly number[]): void {
  group.submit(input, sentAt).then(
    (receipt) => {
      if (offsets === NO_OFFSETS) return answer({ id: ids[0]!, receipt });
      for (let i = 0; i < ids.length; i++) {
        const end = i + 1 < ids.length ? offsets[i + 1]! : input.count;
        answer({ id: ids[i]!, receipt: shareOf(receipt, offsets[i]!, end - offsets[i]!) });
      }
    },
    (error: unknown) => {
      const failure = failureOf(error);
      for (const id of ids) answer({ id, error: failure });
    },
  );
}

const NO_OFFSETS: readonly number[] = Object.freeze([]);

/** Answers of a group go back in one message. */
let answers: Answer[] = [];
/** Receipts with nothing skipped, as numbers (protocol.ts). */
let receipts: number[] = [];
function answer(one: Answer): void {
  if (answers.length === 0 && receipts.length === 0) setImmediate(deliver);
  if ("receipt" in one && one.receipt.skipped.length === 0) {
    const { firstSeq, lastSeq, stored, duplicates } = one.receipt;
    receipts.push(one.id, firstSeq, lastSeq, stored, duplicates);
  } else {
    answers.push(one);
  }
}

function deliver(): void {
  if (answers.length === 0 && receipts.length === 0) return;
  send({ type: "answers", receipts: Float64Array.from(receipts), answers });
  answers = [];
  receipts = [];
}

send({ type: "ready" });
look();
