// The queue consumer's work: each message's events into D1 exactly once, then into Parquet files
// in R2 with the Node archive's columns and daily folders (parquet/rows.ts, partitions.ts).
// A message may be delivered again (a retry after a failure, a crash after the commit): the D1
// insert skips events whose id it holds and senders' ids another event stored, in one transaction;
// the files are named by the first seq D1 gave their rows, so a second delivery writes the same
// files with the same rows over them. Until its files are in R2, a message's seq range is kept in
// `unarchived` (in the insert's transaction): retention never deletes those events, and archives
// them itself when their message was given up on (archiveLeftBehind). An event received before
// its env's first bundle (or of an env with none) goes to its project's shared folder
// (partitions.ts); the first publications are read from D1 once a writer, that is once a queue
// batch or retention run. Both times are stored, so a message delivered again writes each event to the
// folder its first delivery did, whatever was published between them.
import { type PublishedEnvs, groupByPartition, partitionFile, publishedEnvs } from "../parquet/partitions.js";
import { encodeEvents } from "../parquet/rows.js";
import { type FirstPublicationRow, firstPublication } from "../sqlite/bundle-store.js";
import { EVENT_COLUMNS, type SequencedRow, fromEventRow } from "../sqlite/event-rows.js";
import type { SequencedEvent, StoredEvent } from "../types.js";
import type { D1Database, MessageBatch, R2Bucket } from "./bindings.js";
import { FIRST_PUBLICATIONS } from "./d1-bundle-store.js";
import { type EventMessage, firstOfEachId } from "./queued-event-store.js";

/** One event as a JSON array, read by position in SQL (json_each): the whole batch is one bound parameter. */
function eventTuple(event: StoredEvent, seenAt: number): unknown[] {
  const discovered = event.discovered === undefined ? null : Number(event.discovered);
  const { id, receivedAt, orgId, projectId, env, type, unitKey, timestamp } = event;
  return [id, receivedAt, orgId, projectId, env, type, unitKey, timestamp, event.name ?? null, event.decisionId ?? null, discovered, JSON.stringify(event.body), event.clientId ?? null, seenAt];
}

const at = (i: number) => `json_extract(value, '$[${i}]')`;

/** Every event of ?1 not stored yet whose sender's id (when it has one) no other event stored. */
const INSERT_EVENTS = `INSERT OR IGNORE INTO events (${EVENT_COLUMNS})
  SELECT ${Array.from({ length: 12 }, (_, i) => at(i)).join(", ")} FROM json_each(?1)
  WHERE ${at(12)} IS NULL OR NOT EXISTS (SELECT 1 FROM event_ids
    WHERE org_id = ${at(2)} AND project_id = ${at(3)} AND event_id = ${at(12)} AND stored_id != ${at(0)})
  ORDER BY key`;

const REMEMBER_IDS = `INSERT OR IGNORE INTO event_ids (org_id, project_id, event_id, stored_id, seen_at)
  SELECT ${at(2)}, ${at(3)}, ${at(12)}, ${at(0)}, ${at(13)} FROM json_each(?1)
  WHERE ${at(12)} IS NOT NULL AND EXISTS (SELECT 1 FROM events WHERE id = ${at(0)})`;

const STORED = `SELECT seq, ${EVENT_COLUMNS} FROM events WHERE id IN (SELECT ${at(0)} FROM json_each(?1)) ORDER BY seq`;

/** One insert statement numbers its rows without a gap: the range holds this message's events alone. */
const MARK_UNARCHIVED = `INSERT OR IGNORE INTO unarchived (first_seq, last_seq)
  SELECT min(seq), max(seq) FROM events WHERE id IN (SELECT ${at(0)} FROM json_each(?1)) HAVING count(*) > 0`;

/** Ranges whose first event arrived before ?1, oldest first. */
const LEFT_BEHIND = `SELECT u.first_seq, u.last_seq FROM unarchived u JOIN events e ON e.seq = u.first_seq
  WHERE e.received_at < ?1 ORDER BY u.first_seq LIMIT ?2`;

/** Ranges archiveLeftBehind takes per call (a Worker invocation runs at most 1,000 D1 queries). */
const LEFT_BEHIND_PER_RUN = 50;


export class EdgeEventWriter {
  private published: Promise<PublishedEnvs> | undefined;

  constructor(
    private readonly db: D1Database,
    private readonly archive: R2Bucket,
    private readonly now: () => number = Date.now,
  ) {}

  /** Stores the events (those a delivery before this one stored are skipped); resolves once D1 and R2 hold them. */
  async write(events: readonly StoredEvent[]): Promise<SequencedEvent[]> {
    const tuples = JSON.stringify(firstOfEachId(events).map((event) => eventTuple(event, this.now())));
    await this.db.batch([this.db.prepare(INSERT_EVENTS).bind(tuples), this.db.prepare(REMEMBER_IDS).bind(tuples), this.db.prepare(MARK_UNARCHIVED).bind(tuples)]);
    const { results } = await this.db.prepare(STORED).bind(tuples).all<SequencedRow>();
    const stored = results.map(fromEventRow);
    await this.archiveRows(stored, stored[0]?.seq);
    return stored;
  }

  /** Read once a writer; a read that failed is tried again by the next message. */
  private publishedEnvs(): Promise<PublishedEnvs> {
    this.published ??= this.db
      .prepare(FIRST_PUBLICATIONS)
      .all<FirstPublicationRow>()
      .then(({ results }) => publishedEnvs(results.map(firstPublication)))
      .catch((error: unknown) => {
        this.published = undefined;
        throw error;
      });
    return this.published;
  }

  /** The Parquet files of a message's rows, then its mark that they were not archived yet. */
  private async archiveRows(rows: readonly SequencedEvent[], firstSeq: number | undefined): Promise<void> {
    const published = await this.publishedEnvs();
    for (const partition of groupByPartition(rows, published)) await this.archive.put(partitionFile(partition), encodeEvents(partition.rows));
    if (firstSeq !== undefined) await this.db.prepare("DELETE FROM unarchived WHERE first_seq = ?1").bind(firstSeq).run();
  }

  /**
   * Archives the events of messages that arrived before `beforeMs` and are still not in R2 (their
   * message failed until the Queue gave up on it): the same files their consumer would have
   * written. Retention calls it first, so that events due to go are archived before they go.
   */
  async archiveLeftBehind(beforeMs: number): Promise<number> {
    const { results } = await this.db.prepare(LEFT_BEHIND).bind(new Date(beforeMs).toISOString(), LEFT_BEHIND_PER_RUN).all<{ first_seq: number; last_seq: number }>();
    let archived = 0;
    for (const range of results) {
      const rows = await this.db.prepare(`SELECT seq, ${EVENT_COLUMNS} FROM events WHERE seq BETWEEN ?1 AND ?2 ORDER BY seq`).bind(range.first_seq, range.last_seq).all<SequencedRow>();
      await this.archiveRows(rows.results.map(fromEventRow), range.first_seq);
      archived += rows.results.length;
    }
    return archived;
  }

  /** A queue batch: each message acknowledged once written, retried (all of it, idempotently) when anything failed. */
  async consume(batch: MessageBatch<EventMessage>, report: (error: unknown) => void): Promise<void> {
    for (const message of batch.messages) {
      try {
        const body = message.body;
        if ("events" in body) await this.write(body.events);
        else await this.writeSpilled(body.spilled);
        message.ack();
      } catch (error) {
        report(error);
        message.retry();
      }
    }
  }

  private async writeSpilled(key: string): Promise<void> {
    const object = await this.archive.get(key);
    // Gone: an earlier delivery wrote it and deleted it, and then its acknowledgement was lost.
    if (object === null) return;
    await this.write((JSON.parse(await object.text()) as { events: StoredEvent[] }).events);
    await this.archive.delete(key);
  }
}
