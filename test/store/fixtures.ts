// Records for store tests, built in code so each test shows what it varies.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import type { KeyRecord, StoredEvent } from "../../src/store/types.js";

export function makeKey(n: number, extra: Partial<KeyRecord> = {}): KeyRecord {
  const hex = n.toString(16).padStart(16, "0");
  return {
    id: `key_${hex}`,
    secretHash: hex.repeat(4),
    kind: "sk",
    orgId: "org-1",
    scopes: ["resolve", "events:write"],
    createdAt: `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}.000Z`,
    ...extra,
  };
}

export function makeBundle(projectId: string, env: string, version = "2026-11-21T10:00:00.000Z"): Bundle {
  return {
    version,
    orgId: "org-1",
    projectId,
    env,
    hashing: { unitKey: "userId", bucketCount: 1000 },
    parameters: [{ key: "color", type: "string", default: "blue", layerId: "l1", namespace: "ui" }],
    layers: [{ id: "l1", salt: "s1", policies: [] }],
    savedGroups: { beta: ["u1", 2, null] },
  };
}

/** A track event with a unique id; `tag` makes ids distinct across batches. */
export function makeEvent(tag: string, extra: Partial<StoredEvent> = {}): StoredEvent {
  return {
    id: `evt-${tag}`,
    receivedAt: "2026-03-01T12:00:00.000Z",
    orgId: "org-1",
    projectId: "proj-1",
    env: "production",
    type: "track",
    unitKey: `user-${tag}`,
    timestamp: "2026-03-01T11:59:59.000Z",
    name: "purchase",
    body: { type: "track", event: "purchase", properties: { amount: 12.5, items: ["a", "b"] }, tag },
    ...extra,
  };
}

export function makeBatch(tag: string, size: number, extra: Partial<StoredEvent> = {}): StoredEvent[] {
  return Array.from({ length: size }, (_, i) => makeEvent(`${tag}-${i}`, extra));
}

/** A maker of temp folders named `prefix…`; each is removed after the test that made it. */
export function tempDirs(prefix: string): () => string {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}

/** The pending table migration 12 replaced, a row per layer, as migration 3 made it. */
export const SCHEMA_11_PENDING_TABLE = `DROP TABLE pending_decisions;
  CREATE TABLE pending_decisions (
    decision_id TEXT NOT NULL, policy_id TEXT NOT NULL, project_id TEXT NOT NULL, env TEXT NOT NULL, org_id TEXT NOT NULL,
    arm_key TEXT NOT NULL, entity TEXT NOT NULL, features BLOB, reward_event TEXT NOT NULL, decided_at INTEGER NOT NULL,
    closes_at INTEGER NOT NULL, counted INTEGER NOT NULL, rewarded INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (decision_id, policy_id, project_id, env)) WITHOUT ROWID;
  CREATE INDEX pending_closes ON pending_decisions (closes_at)`;
