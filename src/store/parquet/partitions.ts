// Where an event's Parquet file goes. Hive-style folders, so warehouses prune by them:
//
//   events/org=<org>/project=<project>/env=<env>/day=YYYY-MM-DD/part-<first seq>-<last seq>.parquet
//
// A file holds events of its folder's partition with seqs first..last (not every seq between:
// the others are other partitions'). Names are fixed by that range: a delivery retried after a
// crash reads from the same checkpoint and writes the same names, and a compacted file's range
// contains the ranges of the files it replaced. Runtime-free: the edge's writer shares it.
//
// <env> is the event's env when the event was received at or after its env's first bundle, else
// UNPUBLISHED_ENVS: a sender chooses its env freely, and a folder for each let one client's
// made-up envs make a file each in every delivery, which held every tenant's archive back (5,000
// envs put a normal event 115 s behind). An environment exists once its owners publish a bundle to
// it. Both times are stored and never change, so an event's folder is the same whenever it is
// delivered, delivered again or rewritten: a file's name (its seq range) then stands for its rows.
import type { FirstPublication, SequencedEvent } from "../types.js";

/** Digits of a seq in a file name: zero-padded so names sort in seq order. */
const SEQ_DIGITS = 12;
/** Also the layout before this one: `events/dt=…/hour=…/part-<first seq>.parquet`. */
const FILE_NAME = /^part-(\d+)(?:-(\d+))?\.parquet$/;
/** Characters a partition value keeps as they are; any other is %XX-escaped, as Hive does. */
const PLAIN = /^[A-Za-z0-9_-]$/;

export interface Partition {
  /** `events/org=…/project=…/env=…/day=…`. */
  readonly folder: string;
  /** Ascending seq. */
  readonly rows: SequencedEvent[];
}

/** What an archive file's path says it holds. */
export interface ArchivePath {
  /** Relative to the archive's root, "/"-separated. */
  readonly path: string;
  readonly folder: string;
  readonly first: number;
  /** The last seq it may hold; a file of the old layout names only its first. */
  readonly last: number;
}

/** What a partition is named from. */
export interface Environment {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
}

/** When each environment got its first bundle: its events received since are archived under a folder of its own. */
export interface PublishedEnvs {
  /** When the env got its first bundle, epoch millis; +Infinity when it has none. */
  since(environment: Environment): number;
}

/**
 * The env folder of a project's events whose env has no bundle, one per project and day. `~` is
 * %-escaped in every escaped value (%7E), so no env's folder has this name; it is not hidden (no
 * leading `.`), and warehouses take it as it is (Hive and Spark decode %XX only). The rows keep
 * their own env: a reader with Hive partitioning on sees this name in the env column instead.
 */
export const UNPUBLISHED_ENVS = "~unpublished";

/** Whether a partition folder is one of UNPUBLISHED_ENVS. */
export function holdsUnpublished(folder: string): boolean {
  return folder.split("/").includes(`env=${UNPUBLISHED_ENVS}`);
}

/** The envs with a bundle, from the bundle store's first publications; times compared as millis, not text. */
export function publishedEnvs(firsts: Iterable<FirstPublication>): PublishedEnvs {
  const since = new Map<string, number>();
  for (const first of firsts) {
    const millis = Date.parse(first.storedAt);
    if (Number.isNaN(millis)) throw new Error(`the first bundle of ${environmentKey(first)} has an invalid storedAt: ${JSON.stringify(first.storedAt)}`);
    since.set(environmentKey(first), millis);
  }
  return { since: (environment) => since.get(environmentKey(environment)) ?? Number.POSITIVE_INFINITY };
}

/** Every env its own folder: for a pipeline with no bundle store to ask (the layout before unpublished envs shared one). */
export const EVERY_ENV: PublishedEnvs = { since: () => Number.NEGATIVE_INFINITY };

/** JSON of the three: no separator a value could hold. */
const environmentKey = (environment: Environment): string => JSON.stringify([environment.orgId, environment.projectId, environment.env]);

/** The folder of an event of `event`'s env received at `receivedMs` (epoch millis): the day's, and the env's own or the shared one. */
export function partitionFolder(event: Environment, receivedMs: number, published: PublishedEnvs): string {
  const day = new Date(receivedMs).toISOString().slice(0, 10); // always UTC
  const env = receivedMs >= published.since(event) ? escapeValue(event.env) : UNPUBLISHED_ENVS;
  return `events/org=${escapeValue(event.orgId)}/project=${escapeValue(event.projectId)}/env=${env}/day=${day}`;
}

/** The rows grouped by partition, each group in ascending seq, groups by first seq. */
export function groupByPartition(rows: readonly SequencedEvent[], published: PublishedEnvs): Partition[] {
  const byFolder = new Map<string, SequencedEvent[]>();
  for (const row of rows) {
    const folder = partitionFolder(row.event, Number(receivedAtMillis(row)), published);
    const group = byFolder.get(folder);
    if (group) group.push(row);
    else byFolder.set(folder, [row]);
  }
  // Map keeps insertion order, and rows come in ascending seq: groups are by first seq already.
  return [...byFolder].map(([folder, grouped]) => ({ folder, rows: grouped }));
}

/** `<folder>/part-<first seq>-<last seq>.parquet`, 12 digits each. */
export function partitionFile(partition: Partition): string {
  const first = partition.rows[0];
  const last = partition.rows.at(-1);
  if (!first || !last) throw new Error(`empty partition ${partition.folder}`);
  return rangeFile(partition.folder, first.seq, last.seq);
}

export function rangeFile(folder: string, first: number, last: number): string {
  return `${folder}/part-${String(first).padStart(SEQ_DIGITS, "0")}-${String(last).padStart(SEQ_DIGITS, "0")}.parquet`;
}

/** Undefined for a path that is not an archive file (a temporary file, another name). */
export function archivePath(path: string): ArchivePath | undefined {
  const parts = path.split("/");
  const match = FILE_NAME.exec(parts.at(-1)!);
  if (match === null || parts.some((part) => part.startsWith("."))) return undefined;
  const first = Number(match[1]);
  return { path, folder: parts.slice(0, -1).join("/"), first, last: match[2] === undefined ? first : Number(match[2]) };
}

/**
 * The files that hold each event through `through` once: those a delivery wrote past its
 * checkpoint are not yet the archive's (the delivery writes them again), and a file whose range
 * another file of its folder contains was compacted into it.
 */
export function cover<F extends ArchivePath>(files: readonly F[], through: number): F[] {
  const sorted = files.filter((f) => f.first <= through).sort((a, b) => (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : a.first - b.first || b.last - a.last));
  const kept: F[] = [];
  let folder: string | undefined;
  let reach = 0;
  for (const file of sorted) {
    if (file.folder !== folder) {
      folder = file.folder;
      reach = 0;
    }
    if (file.last <= reach) continue;
    kept.push(file);
    reach = file.last;
  }
  return kept;
}

/** `receivedAt` in epoch millis; a stored event with an unreadable receive time is a bug upstream. */
export function receivedAtMillis(row: SequencedEvent): bigint {
  const millis = Date.parse(row.event.receivedAt);
  if (Number.isNaN(millis)) {
    throw new Error(`event seq ${row.seq} has an invalid receivedAt: ${JSON.stringify(row.event.receivedAt)}`);
  }
  return BigInt(millis);
}

/**
 * An escaped value's longest form in a folder name: file systems refuse a name over 255 bytes
 * (ENAMETOOLONG), and `project=` leaves 247. An event's env is the sender's, of any length.
 */
export const MAX_ESCAPED_VALUE = 200;
/**
 * A longer value's name is its escaped start, whole characters only (a reader's URL decoding
 * refuses half a UTF-8 sequence), then `.` and 16 hex digits of the whole value's hash. `.` is
 * escaped in every other name (%2E), so no short value's folder is one of these; two long values
 * of one hash would share a folder, which readers never mind: each row holds its own org,
 * project and env, and the archive is read with hive_partitioning off.
 */
const HASH_TAIL = 17;

function escapeValue(value: string): string {
  let escaped = "";
  /** Where the last whole character that leaves room for the hash ends. */
  let cut = 0;
  for (const char of value) {
    escaped += PLAIN.test(char) ? char : [...new TextEncoder().encode(char)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
    if (escaped.length <= MAX_ESCAPED_VALUE - HASH_TAIL) cut = escaped.length;
  }
  if (escaped === "") return "%00";
  return escaped.length <= MAX_ESCAPED_VALUE ? escaped : `${escaped.slice(0, cut)}.${fnv1a64(value)}`;
}

/** FNV-1a over the value's UTF-8, 64 bits as 16 hex digits: runtime-free (the edge's writer shares this module). */
function fnv1a64(value: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(value)) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash.toString(16).padStart(16, "0");
}
