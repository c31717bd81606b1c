// Two revocations of one key at once (two operators, two servers): the store keeps the first, and
// only the call that made it says it revoked the key; the other answers `alreadyRevoked`, as it
// would have a moment later.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { revokeKeyById } from "../../src/server/admin/key-operations.js";
import { createKey } from "../../src/server/auth/key-admin.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { nodeSha256 } from "./harness.js";

it("answers alreadyRevoked to the revocation that did not land first, with the revocation that did", async () => {
  const dir = mkdtempSync(join(tmpdir(), "vane-revoke-race-"));
  const stores = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
  try {
    const { record } = await createKey(stores.keys, { kind: "sk", orgId: "org-1", projectId: "shop", scopes: ["sdk:read"] }, { sha256: nodeSha256, now: Date.parse("2026-11-29T00:00:00Z") });
    const deps = (at: string) => ({ engine: () => Promise.reject(new Error("no engine needed")), sha256: nodeSha256, now: () => Date.parse(at) });
    // Both read the key unrevoked before either writes (each awaits its read first).
    const [first, second] = await Promise.all([revokeKeyById(stores, record.id, deps("2026-11-29T01:00:00.000Z")), revokeKeyById(stores, record.id, deps("2026-11-29T01:00:05.000Z"))]);
    expect(first).toMatchObject({ alreadyRevoked: false, key: { revokedAt: "2026-11-29T01:00:00.000Z" } });
    expect(second).toMatchObject({ alreadyRevoked: true, key: { revokedAt: "2026-11-29T01:00:00.000Z" } });
  } finally {
    stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
