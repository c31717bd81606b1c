// The Parquet archive's files: where an event's file goes, what a file's name says it holds, and
// which files a reader scans. Layout, Hive style so warehouses prune by folder:
//
//   events/org=<org>/project=<project>/env=<env>/day=YYYY-MM-DD/part-<first seq>-<last seq>.parquet
//
// A file holds events of its folder's partition with seqs first..last (not every seq between:
// the others are other partitions'). Names are fixed by that range, so a delivery retried after a
// crash writes the same name again, and a compacted file's range contains those it replaced:
// a reader given both keeps the larger (cover()), so no event is read twice. Files of the layout
// before this one (`events/dt=…/hour=…/part-<first seq>.parquet`) are still read.
import { readdir } from "node:fs/promises";
import { join } from "node:path";

/** Digits of a seq in a file name: zero-padded so names sort in seq order. */
const SEQ_DIGITS = 12;
const FILE_NAME = /^part-(\d+)(?:-(\d+))?\.parquet$/;
/** Characters a partition value keeps as they are; any other is %XX-escaped, as Hive does. */
const PLAIN = /[A-Za-z0-9_-]/;

export interface PartitionKey {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  /** YYYY-MM-DD, UTC, of the events' receive time. */
  readonly day: string;
}

export interface ArchiveFile {
  /** Relative to the archive's root, "/"-separated. */
  readonly path: string;
  readonly folder: string;
  readonly first: number;
  /** The last seq it may hold; a file of the old layout says only its first. */
  readonly last: number;
}

export function partitionFolder(key: PartitionKey): string {
  return `events/org=${escapeValue(key.orgId)}/project=${escapeValue(key.projectId)}/env=${escapeValue(key.env)}/day=${key.day}`;
}

export function archiveFileName(first: number, last: number): string {
  return `part-${String(first).padStart(SEQ_DIGITS, "0")}-${String(last).padStart(SEQ_DIGITS, "0")}.parquet`;
}

/** The UTC day of epoch millis, as a partition value. */
export function dayOf(millis: number): string {
  return new Date(millis).toISOString().slice(0, 10);
}

function escapeValue(value: string): string {
  let escaped = "";
  for (const char of value) {
    escaped += PLAIN.test(char) ? char : [...new TextEncoder().encode(char)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join("");
  }
  return escaped === "" ? "%00" : escaped;
}

/** Every Parquet file under `root` (none when it does not exist); temporary files (".…") are not. */
export async function listArchive(root: string): Promise<ArchiveFile[]> {
  let names: string[];
  try {
    names = await readdir(root, { recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const files: ArchiveFile[] = [];
  for (const name of names) {
    const path = name.split("\\").join("/");
    const slash = path.lastIndexOf("/");
    const match = FILE_NAME.exec(path.slice(slash + 1));
    if (match === null || path.split("/").some((part) => part.startsWith("."))) continue;
    const first = Number(match[1]);
    files.push({ path, folder: path.slice(0, Math.max(slash, 0)), first, last: match[2] === undefined ? first : Number(match[2]) });
  }
  return files;
}

/**
 * The files that hold each event through `through` once: those a delivery wrote past its
 * checkpoint are not yet the archive's (the delivery writes them again), and a file whose range
 * another file of its folder contains was compacted into it.
 */
export function cover(files: readonly ArchiveFile[], through: number): ArchiveFile[] {
  const sorted = files.filter((f) => f.first <= through).sort((a, b) => a.folder.localeCompare(b.folder) || a.first - b.first || b.last - a.last);
  const kept: ArchiveFile[] = [];
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

export function absolute(root: string, file: ArchiveFile): string {
  return join(root, ...file.path.split("/"));
}
