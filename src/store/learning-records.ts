// The learner's compact records of stored events, built in JavaScript from the events' objects:
// the learner's feed takes them from the events this process committed (adaptive/feed.ts), and the
// embedded store's scan from the log's rows it decodes (logScanPage). One rule for both, so what
// a restart reads back is what the feed would have handed over.
import { LOG_FORMAT_COMPACT, type LogRowFrom, decodeLogRow } from "./log-row.js";
import { type DecidedArm, type DecisionRecord, type LearningEvent, type LearningScan, MINTED_DECISION, type RewardRecord, type SequencedEvent, type StoredEvent } from "./types.js";

/** The fields of an event's envelope a record takes; a compact log row's body repeats them (log-row.ts). */
type Envelope = Pick<StoredEvent, "type" | "orgId" | "projectId" | "env" | "decisionId">;
type Body = Readonly<Record<string, unknown>>;

/** Whether the learner has a use for an event (learningRecord gives a record): what the feed reads of a commit. */
export function learnable(event: StoredEvent): boolean {
  if (event.decisionId === undefined) return false;
  if (event.type === "track") return true;
  const layers = event.body.layers;
  return Array.isArray(layers) && layers.some(isArm);
}

/** A layer that gave the unit an arm the learner learns from. */
function isArm(layer: unknown): layer is { readonly policyId: string; readonly allocationKey: string } {
  if (typeof layer !== "object" || layer === null) return false;
  const { probability, attributionOnly, policyId, allocationKey } = layer as Record<string, unknown>;
  // An attribution-only layer served none of its parameters: the unit never got the arm.
  return probability !== undefined && attributionOnly !== true && typeof policyId === "string" && typeof allocationKey === "string";
}

/** The learner's record of a committed event, or undefined when the learner has no use for it. */
export function learningRecord({ seq, event }: SequencedEvent): LearningEvent | undefined {
  return recordOf(seq, event, event.receivedAt, event.name, event.body, event[MINTED_DECISION] === true);
}

function recordOf(seq: number, envelope: Envelope, receivedAt: string, name: string | undefined, body: Body, minted = false): LearningEvent | undefined {
  const decisionId = envelope.decisionId;
  if (decisionId === undefined) return undefined;
  if (envelope.type === "track") {
    const value = body.value;
    return new Reward(seq, envelope.orgId, envelope.projectId, envelope.env, decisionId, receivedAt, name ?? "", typeof value === "number" && Number.isFinite(value) ? value : undefined);
  }
  const layers = body.layers;
  if (!Array.isArray(layers)) return undefined;
  const arms = armsOf(layers as unknown[]);
  if (!arms) return undefined;
  const { entityId, features, filteredContext } = body;
  return new Decision(
    seq,
    envelope.type,
    envelope.orgId,
    envelope.projectId,
    envelope.env,
    decisionId,
    receivedAt,
    arms,
    typeof entityId === "string" && entityId !== "" ? entityId : undefined,
    Array.isArray(features) ? features : undefined,
    typeof filteredContext === "object" && filteredContext !== null && !Array.isArray(filteredContext) ? (filteredContext as Record<string, unknown>) : undefined,
    minted,
  );
}

/**
 * The arms `layers` served, undefined when none: frozen, and shared by every record of the same
 * arms in the same order (a resolve of the same bandits' arms), where each record made its array
 * and its arms' objects (~0.15 KiB a resolve). The arms met are kept in a trie of at most
 * SHARED_ARMS steps, which configurations bound; past that a record has its own.
 */
function armsOf(layers: readonly unknown[]): readonly DecidedArm[] | undefined {
  let count = 0;
  let node: ArmsNode | undefined = sharedArms;
  for (let i = 0; i < layers.length; i++) {
    const layer = layers[i];
    if (!isArm(layer)) continue;
    count++;
    node = step(step(node, layer.policyId), layer.allocationKey);
  }
  if (count === 0) return undefined;
  if (node?.arms !== undefined) return node.arms;
  const arms = new Array<DecidedArm>(count);
  for (let i = 0, at = 0; at < count; i++) {
    const layer = layers[i];
    if (isArm(layer)) arms[at++] = Object.freeze({ policyId: layer.policyId, armKey: layer.allocationKey });
  }
  if (node !== undefined) node.arms = Object.freeze(arms);
  return arms;
}

interface ArmsNode {
  readonly next: Map<string, ArmsNode>;
  arms: readonly DecidedArm[] | undefined;
}

/** The node after `key`, made while the trie has fewer than SHARED_ARMS steps; undefined past that. */
function step(node: ArmsNode | undefined, key: string): ArmsNode | undefined {
  if (node === undefined) return undefined;
  let next = node.next.get(key);
  if (next === undefined && armSteps < SHARED_ARMS) {
    armSteps++;
    node.next.set(key, (next = { next: new Map(), arms: undefined }));
  }
  return next;
}

const SHARED_ARMS = 4_096;
const sharedArms: ArmsNode = { next: new Map(), arms: undefined };
let armSteps = 0;

/**
 * The learner's records in seqs (afterSeq, upTo] of the log's rows (ascending, each from its
 * `from`), at most `limit`; when the limit cuts in, the page goes through its last record. A row
 * whose text names no decision holds no record and is not parsed (both row formats spell the key
 * as JSON.stringify wrote it).
 */
export function logScanPage(rows: Iterable<LogRowFrom>, afterSeq: number, upTo: number, limit: number): LearningScan {
  const events: LearningEvent[] = [];
  if (limit === 0) return { events, through: afterSeq };
  for (const row of rows) {
    if (!row.text.includes('"decisionId"')) continue;
    const first = Math.max(0, row.from - row.seq);
    const end = Math.min(row.count, upTo + 1 - row.seq);
    const records = row.format === LOG_FORMAT_COMPACT ? compactRecords : storedRecords;
    if (records(row, first, end, events, limit)) return { events, through: events[events.length - 1]!.seq };
  }
  return { events, through: Math.max(afterSeq, upTo) };
}

/** Adds the records of the row's events first..end-1 to `out`; true when `out` reached `limit`. */
type RowRecords = (row: LogRowFrom, first: number, end: number, out: LearningEvent[], limit: number) => boolean;

/** A format-1 row: its events as stored. */
const storedRecords: RowRecords = (row, first, end, out, limit) => {
  const events = decodeLogRow(row.text, row.format);
  for (let i = first; i < end; i++) {
    const record = learningRecord({ seq: row.seq + i, event: events[i]! });
    if (record !== undefined && out.push(record) === limit) return true;
  }
  return false;
};

/**
 * A compact row, [receivedAt, [id, body(, 1)], …]: each body is its envelope (log-row.ts), so
 * the records come straight from the bodies, no event built (that halved the scan's time).
 */
const compactRecords: RowRecords = (row, first, end, out, limit) => {
  const parsed = JSON.parse(row.text) as unknown[];
  const receivedAt = parsed[0] as string;
  for (let i = first; i < end; i++) {
    const body = (parsed[i + 1] as [string, Body])[1];
    const record = recordOf(row.seq + i, body as unknown as Envelope, receivedAt, body.type === "track" ? (body.event as string | undefined) : undefined, body);
    if (record !== undefined && out.push(record) === limit) return true;
  }
  return false;
};

// Classes rather than literals: one shape each, cheap to build and to read in the learner's loop.

class Reward implements RewardRecord {
  readonly type = "track";
  constructor(
    readonly seq: number,
    readonly orgId: string,
    readonly projectId: string,
    readonly env: string,
    readonly decisionId: string,
    readonly receivedAt: string,
    readonly name: string,
    readonly value: number | undefined,
  ) {}
}

class Decision implements DecisionRecord {
  constructor(
    readonly seq: number,
    readonly type: "decision" | "exposure",
    readonly orgId: string,
    readonly projectId: string,
    readonly env: string,
    readonly decisionId: string,
    readonly receivedAt: string,
    readonly arms: readonly DecidedArm[],
    readonly entityId: string | undefined,
    readonly features: readonly unknown[] | undefined,
    readonly filteredContext: Readonly<Record<string, unknown>> | undefined,
    readonly minted: boolean,
  ) {}
}
