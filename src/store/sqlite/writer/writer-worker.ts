// The log writer's thread. It owns the connection that appends to the event log, so a write lock
// held by another process (the CLI writing to the same file) blocks this thread, never the
// server's event loop: config, health and reads go on, and the writes that need the lock wait
// for it (busy_timeout) and then fail, which the server answers with the contract's 503.
// Commits are synchronous=FULL here: fsynced before the answer, off the event loop.
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { GroupCommit } from "../group-commit.js";
import type { CommittedRow } from "../../log-row.js";
import { FeedWindow, charsOf } from "../../feed-window.js";
import { EventLog, MAX_GROUP_EVENTS } from "./event-log.js";
import { type AppendInput, type Answer, type FromWriter, type ToWriter, type WriterOptions, failureOf, inputOf } from "./protocol.js";

const port = parentPort!;
const options = workerData as WriterOptions;
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

/** The Parquet copy's thread, when it runs in this process: it takes committed batches from memory. */
let feed: MessagePort | undefined;
/** What the feed's port holds that the copy has not taken: bounded (feed-window.ts). */
let feedWindow = new FeedWindow();

port.on("message", (message: ToWriter) => {
  if (message.type === "close") {
    group.flush();
    db.close();
    send({ type: "closed" });
    feed?.close();
    port.close();
    return;
  }
  if (message.type === "feed") {
    feed?.close();
    feed = message.port;
    feedWindow = new FeedWindow();
    feed.postMessage(feedWindow.shared);
    // Closed from the other side when the copy stops (its lease lost): nothing more is posted.
    message.port.once("close", () => {
      if (feed === message.port) feed = undefined;
    });
    return;
  }
  for (const item of message.items) {
    const { id } = item;
    group.submit(inputOf(item), item.sentAt).then(
      ({ row, ...receipt }) => {
        if (row && feed) fed.push({ seq: receipt.firstSeq, count: receipt.stored, text: row.text, format: row.format });
        answer({ id, receipt });
      },
      (error: unknown) => answer({ id, error: failureOf(error) }),
    );
  }
});

/** Answers of a group go back in one message, and its batches to the feed in another. */
let answers: Answer[] = [];
let fed: CommittedRow[] = [];
function answer(one: Answer): void {
  if (answers.length === 0) setImmediate(() => {
    // The feed first: a copy told to look once an append is answered finds the batch in memory.
    // Past the window the copy reads these batches from the log instead.
    if (fed.length > 0 && feedWindow.admit(charsOf(fed))) feed?.postMessage(fed);
    fed = [];
    send({ type: "answers", answers });
    answers = [];
  });
  answers.push(one);
}

send({ type: "ready" });
