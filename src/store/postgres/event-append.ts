// One append of a group of batches (the appends a server received meanwhile, event-store.ts):
// their sender ids, events and discovered counts in one transaction, whose statements are as many
// for a group as for one batch, so the commit (its round trips and its fsync) is shared.
//
// Seqs come from the one-row event_head, updated in the same statement that inserts the events:
// the row lock is held to COMMIT, so the next append (on any server) waits and continues from
// this one's end. Seqs are therefore contiguous and given in commit order: a reader never sees
// seq N+1 while N is still uncommitted, which a sequence (bigserial) would allow.
//
// Sender ids are claimed before that lock, in a fixed order (two appends claiming the same ids
// wait for each other without deadlock), and the discovered counts after it.
import type pg from "pg";
import { countDiscovered } from "../sqlite/event-rows.js";
import type { AppendReceipt, StoredEvent } from "../types.js";
import { run, transaction } from "./db.js";

export interface Appended extends AppendReceipt {
  /** The events stored, in order, from seq lastSeq - stored + 1. */
  readonly fresh: readonly StoredEvent[];
}

/** Events whose sender id is new for their org and project, claiming those ids; the first of the repeats (in group order) wins. */
async function claimIds(tx: pg.PoolClient, events: readonly StoredEvent[]): Promise<StoredEvent[]> {
  const firsts = new Map<string, StoredEvent>();
  for (const event of events) {
    if (event.clientId === undefined) continue;
    const key = JSON.stringify([event.orgId, event.projectId, event.clientId]);
    if (!firsts.has(key)) firsts.set(key, event);
  }
  if (firsts.size === 0) return [...events];
  const claims = [...firsts.values()];
  const claimed = await run<{ org_id: string; project_id: string; event_id: string }>(
    tx,
    `INSERT INTO event_ids (org_id, project_id, event_id, seen_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
     ORDER BY 1, 2, 3
     ON CONFLICT DO NOTHING
     RETURNING org_id, project_id, event_id`,
    [claims.map((e) => e.orgId), claims.map((e) => e.projectId), claims.map((e) => e.clientId!), claims.map((e) => Date.parse(e.receivedAt))],
  );
  const fresh = new Set(claimed.rows.map((row) => firsts.get(JSON.stringify([row.org_id, row.project_id, row.event_id]))));
  return events.filter((event) => event.clientId === undefined || fresh.has(event));
}

/**
 * Inserts the events with the next seqs; returns the seq before the first. A server id already
 * stored keeps its first copy (server ids are UUIDv7s: it cannot happen but by a bug), as SQLite does.
 */
async function insertEvents(tx: pg.PoolClient, fresh: readonly StoredEvent[]): Promise<number> {
  const result = await run<{ base: number }>(
    tx,
    `WITH head AS (UPDATE event_head SET seq = seq + $1 RETURNING seq - $1 AS base),
    inserted AS (
      INSERT INTO events (seq, id, received_at, org_id, project_id, env, type, unit_key, timestamp, name, decision_id, discovered, body)
      SELECT head.base + e.ord, e.id, e."receivedAt", e."orgId", e."projectId", e.env, e.type, e."unitKey", e.timestamp,
             e.name, e."decisionId", e.discovered, e.body
      FROM head, ROWS FROM (jsonb_to_recordset($2::jsonb)
        AS (id text, "receivedAt" text, "orgId" text, "projectId" text, env text, type text, "unitKey" text,
            timestamp text, name text, "decisionId" text, discovered boolean, body jsonb))
        WITH ORDINALITY AS e (id, "receivedAt", "orgId", "projectId", env, type, "unitKey", timestamp, name, "decisionId", discovered, body, ord)
      ON CONFLICT (id) DO NOTHING
    )
    SELECT base FROM head`,
    [fresh.length, jsonbText(fresh)],
  );
  return result.rows[0]!.base;
}

/**
 * JSON text jsonb takes. JSON.stringify writes a lone UTF-16 surrogate (a resolve's context may hold
 * one: "\ud800" is valid JSON) as a \udXXX escape, which jsonb refuses, as it has no UTF-8 form: the
 * append failed, and its request was a 503 on every retry. U+FFFD stands in its place, as TextEncoder
 * writes it and the Parquet copy stores it. Only text that may hold one is written again.
 */
function jsonbText(value: unknown): string {
  const text = JSON.stringify(value);
  return mayEscapeSurrogate(text) ? JSON.stringify(value, wellFormed) : text;
}

/**
 * Whether the text holds what JSON.stringify writes for a lone surrogate, `\ud8`–`\udf` (lower
 * case); a sender's backslash before "ud8…" matches too, and is only written again. Searched with
 * indexOf, not a regular expression: ~3x less time over a 100-event append's text.
 */
function mayEscapeSurrogate(text: string): boolean {
  for (let at = text.indexOf("\\ud"); at !== -1; at = text.indexOf("\\ud", at + 3)) {
    const next = text.charCodeAt(at + 3);
    if (next === 0x38 || next === 0x39 || (next >= 0x61 && next <= 0x66)) return true; // 8, 9, a–f
  }
  return false;
}
const wellFormed = (_key: string, value: unknown): unknown => (typeof value === "string" ? value.toWellFormed() : value);

async function countDiscoveredEvents(tx: pg.PoolClient, fresh: readonly StoredEvent[]): Promise<void> {
  const rows = countDiscovered(fresh);
  if (rows.length === 0) return;
  // COLLATE "C": ISO times compare as text whatever the database's collation.
  await run(
    tx,
    `INSERT INTO discovered_events (org_id, project_id, env, name, count, first_seen, last_seen)
     SELECT * FROM jsonb_to_recordset($1::jsonb)
       AS (org_id text, project_id text, env text, name text, count bigint, first_seen text, last_seen text)
     ON CONFLICT (org_id, project_id, env, name) DO UPDATE SET count = discovered_events.count + EXCLUDED.count,
       first_seen = least(discovered_events.first_seen COLLATE "C", EXCLUDED.first_seen),
       last_seen = greatest(discovered_events.last_seen COLLATE "C", EXCLUDED.last_seen)`,
    [JSON.stringify(rows)],
  );
}

/** Called when an append has its seqs (its place in commit order); the result, once it committed or failed. */
export type EnterCommitOrder = () => (appended: Appended | undefined) => void;

/**
 * Stores the batches in one transaction, all or nothing, each in order after the one before; one
 * receipt per batch. A batch's ids repeated by a later batch of the group count as its duplicates.
 */
export async function appendGroup(pool: pg.Pool, batches: readonly (readonly StoredEvent[])[], enter: EnterCommitOrder): Promise<Appended[]> {
  let settle: ((appended: Appended | undefined) => void) | undefined;
  try {
    const [group, receipts] = await transaction(pool, async (tx): Promise<[Appended, Appended[]]> => {
      const fresh = new Set(await claimIds(tx, batches.flat()));
      const perBatch = batches.map((events) => events.filter((event) => fresh.has(event)));
      const all = perBatch.flat();
      let base: number;
      if (all.length === 0) {
        base = (await run<{ seq: number }>(tx, "SELECT seq FROM event_head")).rows[0]!.seq;
      } else {
        base = await insertEvents(tx, all);
        settle = enter();
        await countDiscoveredEvents(tx, all);
      }
      let through = base;
      const receipts = perBatch.map((stored, i): Appended => {
        through += stored.length;
        return { lastSeq: through, stored: stored.length, duplicates: batches[i]!.length - stored.length, fresh: stored };
      });
      return [{ lastSeq: base + all.length, stored: all.length, duplicates: 0, fresh: all }, receipts];
    });
    settle?.(group);
    return receipts;
  } catch (error) {
    settle?.(undefined);
    throw error;
  }
}
