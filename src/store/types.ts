// What the service stores, behind small async interfaces: the app never assumes one process or
// synchronous storage. The embedded SQLite store implements them now; KV/D1 and a multi-instance
// store implement the same interfaces later, checked by the same contract test
// (test/store/contract.ts).
import type { Bundle } from "../bundle/types.js";
import type { LogRowRead, LogRowText } from "./log-row.js";

export type KeyKind = "pk" | "sk" | "mk" | "ak";

export interface RateLimit {
  readonly requestsPerSecond: number;
  readonly burst: number;
}

/** An API key as stored: never the secret, only its SHA-256 (decisions.md §1). */
export interface KeyRecord {
  /** Public handle, `key_` + the first 16 hex digits of the secret's SHA-256. */
  readonly id: string;
  /** Hex SHA-256 of the full key string `vane_<kind>_<secret>`. */
  readonly secretHash: string;
  readonly kind: KeyKind;
  readonly orgId: string;
  /** Absent for an org-scoped key. */
  readonly projectId?: string;
  readonly scopes: readonly string[];
  /** ISO 8601. */
  readonly createdAt: string;
  readonly expiresAt?: string;
  readonly revokedAt?: string;
  /** Id of the key that replaced this one by rotation. */
  readonly rotatedTo?: string;
  readonly rateLimit?: RateLimit;
}

export interface KeyStore {
  byHash(secretHash: string): Promise<KeyRecord | undefined>;
  byId(id: string): Promise<KeyRecord | undefined>;
  /** Inserts, or replaces the key with the same id. */
  put(key: KeyRecord): Promise<void>;
  /**
   * Revokes the key at `at` (a key revoked already keeps its first revocation), writing that field
   * alone, so a rotation writing the key at the same moment cannot undo it. The key as stored
   * after; undefined when there is no such id.
   */
  revoke(id: string, at: string): Promise<KeyRecord | undefined>;
  /**
   * Stores `replacement` and marks key `id` rotated to it, valid until `expiresAt`, together, only
   * while `id` is neither revoked nor rotated: whether it did (nothing is written when not).
   */
  rotate(id: string, replacement: KeyRecord, expiresAt: string): Promise<boolean>;
  /** Every key, oldest first. */
  list(): Promise<KeyRecord[]>;
}

export interface StoredBundle {
  readonly bundle: Bundle;
  /** ISO 8601 time the store received it. */
  readonly storedAt: string;
}

export interface BundleSummary {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly version: string;
  readonly storedAt: string;
}

/**
 * When an (org, project, env) got its first bundle: set by that put and never changed (bundles
 * are never deleted), so the Parquet archive decides each event's folder by it the same way on
 * every delivery (parquet/partitions.ts).
 */
export interface FirstPublication {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  /** ISO 8601, the first put's storedAt. */
  readonly storedAt: string;
}

export interface BundleStore {
  get(projectId: string, env: string): Promise<StoredBundle | undefined>;
  /** The stored bundle's version, without reading the bundle: the cheap freshness check. */
  version(projectId: string, env: string): Promise<string | undefined>;
  /**
   * The organizations whose bundles name this project (any env): a project belongs to the org of
   * its bundles. More than one only in a store written before put() refused a second org.
   */
  orgsOf(projectId: string): Promise<string[]>;
  /**
   * Stores the bundle for its projectId/env, replacing the one there. Rejects (ProjectOwnedElsewhere)
   * a bundle for a project whose bundles belong to another organization. With `expectedVersion`
   * it stores only while that version is still the stored one (null: while none is stored), and
   * answers false otherwise (compare and set: a publication checked against, or edited from, one
   * version, or against none, never replaces another that a second publisher stored meanwhile).
   */
  put(bundle: Bundle, storedAt: string, expectedVersion?: string | null): Promise<boolean>;
  /**
   * Replaces the stored bundle only while its version is still `expectedVersion` (compare and
   * set: a publication of learned weights never overwrites a bundle imported meanwhile), and
   * records it in the history as the learner's.
   */
  replace(bundle: Bundle, storedAt: string, expectedVersion: string): Promise<boolean>;
  /** Every stored bundle, ordered by project then env. */
  list(): Promise<BundleSummary[]>;
  /** The first publication of every env that has a bundle. */
  firstPublications(): Promise<FirstPublication[]>;
  /**
   * The versions published for a project/env (the stored one included), newest publication
   * first: by put() (an operator) and by replace() (the learner). At most BUNDLE_HISTORY_LIMIT of
   * each are kept, so the learner's never push out what people published.
   */
  history(projectId: string, env: string): Promise<HistoryEntry[]>;
  /** One version of the history; undefined when it was never published or no longer kept. */
  historyVersion(projectId: string, env: string, version: string): Promise<StoredBundle | undefined>;
}

/** Who published a version: an operator (put: import, `bundles put`, rollback) or the learner's weights (replace). */
export type PublishedBy = "operator" | "learner";

export interface HistoryEntry extends BundleSummary {
  readonly by: PublishedBy;
}

/** Published versions kept per project and env, and as many of the learner's. */
export const BUNDLE_HISTORY_LIMIT = 50;

export type EventType = "exposure" | "track" | "decision";

/**
 * Marks a decision event whose decisionId this process minted for it (resolve, OFREP, decide): no
 * earlier event can name that id, so the learner looks it up nowhere (learner.ts). A symbol, so no
 * store writes it: only this process's commit listeners see it, never a scan or another process.
 */
export const MINTED_DECISION: unique symbol = Symbol("vane.mintedDecision");

/** An accepted event with what the server adds: its id, receive time and tenant. */
export interface StoredEvent {
  /** Server-assigned id (UUID). */
  readonly id: string;
  /** ISO 8601, the server's clock. */
  readonly receivedAt: string;
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly type: EventType;
  readonly unitKey: string;
  /** The event's own ISO 8601 timestamp. */
  readonly timestamp: string;
  /** A track event's name. */
  readonly name?: string;
  readonly decisionId?: string;
  /** The event's own `id`, set by its sender: stored once per org, project and id within the dedup window. */
  readonly clientId?: string;
  /** A track event whose name matches no event definition: counted as auto-discovered. */
  readonly discovered?: boolean;
  /** The event as accepted, with orgId/projectId/env set from the key. */
  readonly body: Readonly<Record<string, unknown>>;
  /** True on a decision event this process minted the id of (MINTED_DECISION). */
  readonly [MINTED_DECISION]?: true;
}

/** A stored event and its place in commit order. */
export interface SequencedEvent {
  /** Increases with commit order; starts at 1. */
  readonly seq: number;
  readonly event: StoredEvent;
}

export interface AppendReceipt {
  /** Sequence of the batch's last stored event; when none was stored, the last stored (0 when none). */
  readonly lastSeq: number;
  /** Events stored by this append. */
  readonly stored: number;
  /** Events not stored because their clientId was seen within the dedup window (or earlier in the batch). */
  readonly duplicates: number;
}

/** What a retention run removed (EventStore.prune). */
export interface PruneReceipt {
  readonly events: number;
  readonly eventIds: number;
}

export interface PruneRule {
  /** Events received before this time (ms since the epoch) may go... */
  readonly eventsBeforeMs: number;
  /** ...once every derived copy (these checkpoints) has passed them. */
  readonly derived: readonly string[];
  /** Remembered event ids older than this (ms since the epoch) are forgotten. */
  readonly idsBeforeMs: number;
  /** Rows deleted per transaction, so a long prune never holds the store (and event loop) for long. */
  readonly chunk?: number;
}

export interface DiscoveredEvent {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly name: string;
  readonly count: number;
  readonly firstSeen: string;
  readonly lastSeen: string;
}

export interface EventFilter {
  readonly orgId?: string;
  readonly projectId?: string;
  readonly type?: EventType;
  /** Newest first; at most this many. */
  readonly limit?: number;
}

export interface EventStore {
  /**
   * Stores the batch in one transaction, in order, with its discovered-event counts: all of it
   * or, on failure (a rejected promise), none of it. `row`, when the caller wrote it: the batch's
   * log row exactly as encodeLogRow(events) would (log-row.ts), which a store of such rows takes
   * as it is instead of serializing the events again; other stores ignore it.
   */
  append(events: readonly StoredEvent[], row?: LogRowText): Promise<AppendReceipt>;
  /** Events with seq > `afterSeq`, ascending, at most `limit`. */
  readAfter(afterSeq: number, limit: number): Promise<SequencedEvent[]>;
  /**
   * The same events as the log's rows, undecoded (log-row.ts), for a reader that takes their text
   * (the Parquet copy's DuckDB): whole rows from the one holding `afterSeq` + 1, until they hold
   * `limit` events or more, as text or as the text's UTF-8 bytes (SQLite's: no V8 string between
   * its C and DuckDB's C++). Only a store that keeps such rows has it.
   */
  readLogAfter?(afterSeq: number, limit: number): Promise<LogRowRead[]>;
  /** Deletes what the rule lets go, oldest first, in chunks; never an event a derived copy has not passed. */
  prune(rule: PruneRule): Promise<PruneReceipt>;
  discovered(): Promise<DiscoveredEvent[]>;
  /** Where a secondary pipeline has delivered up to (0 when never). */
  checkpoint(pipeline: string): Promise<number>;
  setCheckpoint(pipeline: string, seq: number): Promise<void>;
  /**
   * Calls `listener` with the events of every append of this process once they are durable, in
   * commit order with their seqs: consumers (the learner, the Parquet copy) take the committed
   * batch from memory instead of reading it back. Events other processes store are not fed: a
   * consumer reads those (and any gap) with readAfter. With `reads`, the listener is handed only
   * the committed events it reads (the span still says every seq the append committed), and the
   * store lets go of the others as soon as the append is handed to the log: a batch's parsed
   * events would otherwise live through young-generation GCs while the commit is awaited, which
   * copies and promotes them. Returns a function that unsubscribes.
   */
  onCommitted(listener: CommitListener, reads?: CommitReads): () => void;
}

/**
 * The event reads a store answers itself, for a host without DuckDB (the Worker's D1). On Node
 * they go through DuckDB over the Parquet archive and the log's tail (columnar/event-view.ts).
 */
export interface EventListing {
  /** Stored events, newest first. */
  list(filter?: EventFilter): Promise<SequencedEvent[]>;
  count(filter?: Omit<EventFilter, "limit">): Promise<number>;
  /** The organizations with events in this project: a filter by project alone must be unambiguous. */
  orgsWithEvents(projectId: string): Promise<string[]>;
}

/** The seqs one append committed, first to last: every seq between them holds one of its events. */
export interface CommittedSpan {
  readonly first: number;
  readonly last: number;
}

export type CommitListener = (events: readonly SequencedEvent[], span: CommittedSpan) => void;

/** Which of an append's events a commit listener reads. */
export type CommitReads = (event: StoredEvent) => boolean;

/** For a listener that only wants to know that something committed. */
export const READS_NONE: CommitReads = () => false;

/** A secondary delivery of stored events (the Parquet files for warehouses). */
export interface EventPipeline {
  readonly name: string;
  /**
   * Delivers every stored event up to at least `seq`, any earlier backlog included; rejects when
   * delivery failed (the events stay in the primary store for the next call).
   */
  deliverThrough(seq: number): Promise<void>;
}

/** An arm's learned statistics for the population (entity "") or one entity (src/adaptive/stats.ts). */
export interface ArmRow {
  readonly projectId: string;
  readonly env: string;
  readonly policyId: string;
  readonly entity: string;
  readonly armKey: string;
  readonly stats: Float64Array;
}

/**
 * An adaptive decision inside its reward window. It counted as a trial of its arm when it was
 * read; it waits for its first reward until the window closes, then it is forgotten.
 */
export interface PendingDecision {
  readonly decisionId: string;
  readonly policyId: string;
  /** The tenant: a reward counts only from the same org, project and env. */
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly armKey: string;
  /** "" when the policy is not per-entity. */
  readonly entity: string;
  /** The encoded context of a contextual decision. */
  readonly features?: Float64Array;
  readonly rewardEvent: string;
  /** ms since the epoch, server time: when the decision was received. */
  readonly decidedAt: number;
  /** ms since the epoch: a reward received later is too late. */
  readonly closesAt: number;
  /** False for a decision stored before trials were counted at decision time: it counts when it settles. */
  readonly counted: boolean;
  /** Its reward has been learned; later ones are ignored. */
  readonly rewarded: boolean;
}

/** Names one pending decision. */
export interface PendingKey {
  readonly decisionId: string;
  readonly policyId: string;
  readonly projectId: string;
  readonly env: string;
}

/** One learning step, committed whole: statistics, pending decisions and the log positions. */
export interface LearningCommit {
  readonly arms: readonly ArmRow[];
  /** Pending decisions moved out of the learner's memory (spilled past its bound). */
  readonly addPending: readonly PendingDecision[];
  /** Stored pending decisions whose reward this step learned. */
  readonly rewardPending: readonly PendingKey[];
  /** Stored pending decisions whose window closed. */
  readonly removePending: readonly PendingKey[];
  /** The event log position the step has read through. */
  readonly checkpoint: number;
  /**
   * The lease the learner holds (several servers on one store): the commit is refused with
   * LeaseLost, changing nothing, unless this holder still has it, so a learner that lost its lease
   * (a stall past its expiry, a network split) can never commit a step another has taken over.
   */
  readonly lease?: LeaseClaim;
  /**
   * Every pending decision the learner holds only in memory comes from an event after this seq:
   * after a restart it rebuilds them from the log between here and `checkpoint`.
   */
  readonly memoryFrom: number;
}

/** Where the learner stands in the log (LearningStore.positions). */
export interface LearningPositions {
  /** Read through: every effect of the events up to here is committed. */
  readonly learned: number;
  /** The in-memory pending decisions come from events in (memoryFrom, learned]. */
  readonly memoryFrom: number;
  /** Pending decisions in the store (spilled). */
  readonly stored: number;
}

interface LearningEventBase {
  readonly seq: number;
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly decisionId: string;
  readonly receivedAt: string;
}

/** An adaptive layer of a decision: the arm it served with a propensity (not attribution only). */
export interface DecidedArm {
  readonly policyId: string;
  readonly armKey: string;
}

/**
 * A decision event, or an exposure from local resolution, as the learner reads it: compact, taken
 * from the committed event in memory or extracted by SQLite, so the learner parses no JSON.
 */
export interface DecisionRecord extends LearningEventBase {
  readonly type: "decision" | "exposure";
  /** The layers that served an arm with a `probability` and were not attribution only. */
  readonly arms: readonly DecidedArm[];
  /** The logged `entityId` when a non-empty string. */
  readonly entityId: string | undefined;
  /** The logged encoded context (decide's `features`), when an array. */
  readonly features: readonly unknown[] | undefined;
  /** What `logContextFields` kept (read only when the fields above are missing). */
  readonly filteredContext: Readonly<Record<string, unknown>> | undefined;
  /** The event's id was minted for it by this process (MINTED_DECISION): false from a scan, whatever made the event. */
  readonly minted: boolean;
}

/** A track event naming a decision. */
export interface RewardRecord extends LearningEventBase {
  readonly type: "track";
  readonly name: string;
  /** The event's `value` when it is a number. */
  readonly value: number | undefined;
}

/**
 * An event of the log as the learner reads it: a decision or exposure that carries a propensity
 * (some layer's `probability`), or a track event that names a decision. Nothing else is read.
 */
export type LearningEvent = DecisionRecord | RewardRecord;

export interface LearningScan {
  readonly events: readonly LearningEvent[];
  /** Every event of the log up to this seq has been considered (it is past the last one returned when others were skipped). */
  readonly through: number;
}

/** Open pending decisions in the store, counted per arm and time bin (the delay model's bookkeeping). */
export interface OpenTrialBin {
  readonly projectId: string;
  readonly env: string;
  readonly policyId: string;
  readonly armKey: string;
  readonly windowMs: number;
  /** The earliest decision time in the bin. */
  readonly atMs: number;
  readonly count: number;
}

/** A published bin's key: an arm's bins have distinct starts (one window per arm, delay.ts). */
export type OpenTrialBinKey = Pick<OpenTrialBin, "projectId" | "env" | "policyId" | "armKey" | "atMs">;

/** What changed in the open trials a learner publishes since its last publication. */
export interface OpenTrialChanges {
  /** Bins new, or with a new count. */
  readonly upsert: readonly OpenTrialBin[];
  /** Bins gone (their window passed). */
  readonly remove: readonly OpenTrialBinKey[];
  /** Every bin published before goes first (a learner's first publication: the store may hold another learner's). */
  readonly replace: boolean;
}

/**
 * The learner's state (src/adaptive/learner.ts): it survives a restart and is exactly-once with the
 * log. Recent pending decisions live in the learner's memory; older ones are spilled here.
 */
export interface LearningStore {
  /** The learner's events after `afterSeq`, ascending: at most `limit`, from at most `span` seqs of the log. */
  scan(afterSeq: number, limit: number, span: number): Promise<LearningScan>;
  /** Every stored row: the population's and every entity's. */
  arms(): Promise<ArmRow[]>;
  /** The population's rows (entity ""), every policy's: what a start loads (entities are read as they are needed). */
  populationArms(): Promise<ArmRow[]>;
  /** The stored rows of these entities of one policy (none for an entity never learned). */
  entityArms(projectId: string, env: string, policyId: string, entities: readonly string[]): Promise<ArmRow[]>;
  positions(): Promise<LearningPositions>;
  /** Stored pending decisions with these decision ids, of any tenant (the caller matches the tenant). */
  pendingFor(decisionIds: readonly string[]): Promise<PendingDecision[]>;
  /** The stored pending decisions that counted as a trial, binned by time (W / bins wide), for the delay model after a restart. */
  openTrialBins(bins: number): Promise<OpenTrialBin[]>;
  /** Stored pending decisions whose window closed at or before `nowMs`, earliest first. */
  due(nowMs: number, limit: number): Promise<PendingDecision[]>;
  /**
   * Deletes up to `limit` of the due stored decisions that counted as a trial when made, earliest
   * first, without reading them back: their close changes no statistics. Fenced by `lease` as a
   * commit is. A store without it has them closed through `due` and `commit`.
   */
  closeCounted?(nowMs: number, limit: number, lease: LeaseClaim | undefined): Promise<ClosedCounted>;
  commit(step: LearningCommit): Promise<void>;
  /**
   * Changes the open trials published for the other servers (the ones the learner holds in
   * memory), in one transaction: a server that decides without learning reads them with the
   * stored ones (the delay model).
   */
  publishOpenTrials(changes: OpenTrialChanges): Promise<void>;
  /** What publishOpenTrials last stored. */
  publishedOpenTrials(): Promise<OpenTrialBin[]>;
}

/** What closeCounted deleted: how many, and how many of them were never rewarded. */
export interface ClosedCounted {
  readonly closed: number;
  readonly unrewarded: number;
}

/** A lease and who claims it. */
export interface LeaseClaim {
  readonly name: string;
  readonly holder: string;
}

/** A commit made under a lease its holder no longer has (LearningCommit.lease). */
export class LeaseLost extends Error {
  constructor(claim: LeaseClaim) {
    super(`lease ${claim.name} is no longer held by ${claim.holder}`);
    this.name = "LeaseLost";
  }
}

/**
 * Named roles that one server at a time plays over a shared store (the learner, the Parquet copy,
 * the weights publisher, retention): a holder renews its lease well within `ttlMs`; when it dies
 * the lease expires and another server takes it. Time is the store's clock, so servers whose
 * clocks disagree still agree on expiry.
 */
export interface LeaseStore {
  /** Takes the lease when free or expired, renews it when `holder` has it: true when `holder` holds it for `ttlMs` from now. */
  acquire(name: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Ends `holder`'s lease at once (a clean shutdown), so another server need not wait for its expiry. */
  release(name: string, holder: string): Promise<void>;
}

export type StoreHealth = "ok" | "down";

/** What another server wrote that this one may hold in a cache. */
export type StoreChange =
  | { readonly kind: "bundle"; readonly projectId: string; readonly env: string }
  | { readonly kind: "key"; readonly secretHash: string };

/**
 * A shared store's word that something changed, sent once the change is committed, so every server
 * drops its cached copy at once instead of at its next refresh. Delivery is best effort (a
 * connection that drops misses some): the caches still refresh on their own.
 */
export interface ChangeFeed {
  /** Resolves once listening; the returned function stops. */
  listen(listener: (change: StoreChange) => void): Promise<() => Promise<void>>;
}

export interface Stores {
  readonly bundles: BundleStore;
  readonly keys: KeyStore;
  readonly events: EventStore;
  readonly learning: LearningStore;
  readonly leases: LeaseStore;
  /** Present on a store servers share and that can tell them of changes (PostgreSQL's LISTEN/NOTIFY). */
  readonly changes?: ChangeFeed;
  /**
   * Stores keys and bundles in one transaction: all of them, or (on a failure) none. What `vane
   * import` and the admin API's import write with; a store without it cannot import. False when
   * a bundle's stored version was no longer the one `replacing` names: nothing written then.
   */
  writeAll?(writes: StoreWrites): Promise<boolean>;
  /** Each store's state, for /health. */
  health(): Promise<Record<string, StoreHealth>>;
}

/** Keys and bundles written together (Stores.writeAll). */
export interface StoreWrites {
  readonly keys: readonly KeyRecord[];
  readonly bundles: readonly Bundle[];
  /** Each bundle's expected stored version, by index (BundleStore.put's expectedVersion: null for none stored); absent or undefined: not checked. */
  readonly replacing?: readonly (string | null | undefined)[];
  readonly storedAt: string;
}
