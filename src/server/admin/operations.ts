// The admin operations (docs/api.md "Admin API"), one interface with two implementations: over
// the stores (local-operations.ts: what the admin routes run, and what the CLI runs on its own
// data folder) and over HTTP (src/cli/remote/: the CLI's --remote). Results carry no key hash and
// a new key's secret only once, in the answer that created it.
import type { Engine } from "../../engine/engine.js";
import type { BundleSummary, DiscoveredEvent, EventFilter, KeyKind, KeyRecord, RateLimit, SequencedEvent } from "../../store/types.js";
import type { Sha256 } from "../auth/api-key.js";
import type { SchemaCompiler } from "../events/schemas.js";

/** A key as the admin API shows it: everything but the hash its secret is looked up by. */
export type PublicKey = Omit<KeyRecord, "secretHash">;

export interface PublishHow {
  /** A version older than the stored one is allowed. */
  readonly rollback?: boolean;
  /** The stored version an edit was made from (`flags set`, `rollout`, the console): refused once another is stored. */
  readonly base?: string;
}

export interface Published {
  readonly stored: BundleSummary;
  /** The version it replaced, when there was one. */
  readonly previous?: string;
}

export interface KeyRequest {
  readonly kind: KeyKind;
  readonly orgId: string;
  readonly projectId?: string;
  readonly scopes: readonly string[];
  readonly expiresAt?: string;
  readonly rateLimit?: RateLimit;
}

export interface CreatedKey {
  /** The full secret: in this answer only, never stored. */
  readonly secret: string;
  readonly key: PublicKey;
}

export interface Revocation {
  readonly key: PublicKey;
  /** It was revoked before: nothing changed. */
  readonly alreadyRevoked: boolean;
}

export interface Rotation extends CreatedKey {
  /** The replaced key, with the end of its grace period as its expiry. */
  readonly old: PublicKey;
}

export interface Imported {
  readonly keys: readonly { readonly key: PublicKey; readonly replaced: boolean }[];
  readonly bundles: readonly Published[];
}

export type EventsFilter = Omit<EventFilter, "limit">;

export interface AdminOperations {
  /** Every check `vane bundles put` makes, then the put; `rollback` allows a version older than the stored one. */
  publishBundle(raw: unknown, how: PublishHow): Promise<Published>;
  /** Publishes an earlier version's content again, as a new version, through the same checks. */
  rollbackBundle(where: { project: string; env: string }, version: string): Promise<Published>;
  createKey(request: KeyRequest): Promise<CreatedKey>;
  listKeys(): Promise<PublicKey[]>;
  /** The key with this id (`key_…`), or undefined. */
  findKey(id: string): Promise<PublicKey | undefined>;
  revokeKey(id: string): Promise<Revocation>;
  rotateKey(id: string): Promise<Rotation>;
  /** The import file's keys and bundles, all or nothing. */
  importFile(raw: unknown): Promise<Imported>;
  countEvents(filter: EventsFilter): Promise<number>;
  listEvents(filter: EventsFilter & { limit: number }): Promise<SequencedEvent[]>;
  discoveredEvents(): Promise<DiscoveredEvent[]>;
}

/** What the operations over the stores need besides them. */
export interface OperationDependencies {
  /** The engine a bundle must fit (loaded on first use: the CLI's reads need none). */
  readonly engine: () => Promise<Engine>;
  readonly sha256: Sha256;
  /** How bundles' property schemas compile: ajv's when absent (the host's, where eval is not allowed). */
  readonly schemaCompiler?: SchemaCompiler;
  /** ms since the epoch. */
  readonly now: () => number;
}

export function publicKey(record: KeyRecord): PublicKey {
  const { secretHash: _hash, ...rest } = record;
  return rest;
}
