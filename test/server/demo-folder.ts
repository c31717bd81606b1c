// A data folder as the CLI leaves it before `vane serve` starts: the demo bundle (published a
// minute ago) and one key of the demo project, written to the folder's SQLite store.
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeSha256 } from "../../src/cli/store-access.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { SqliteStores } from "../../src/store/sqlite/index.js";
import type { KeyKind } from "../../src/store/types.js";

/** Writes the demo bundle and a new `kind` key with sdk:write into `stores`; returns the key. */
export function seedDemo(stores: SqliteStores, kind: KeyKind = "sk"): string {
  const key = generateKey(kind);
  stores.writeAll({
    keys: [toKeyRecord({ key, orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:write"] }, nodeSha256, new Date().toISOString())],
    bundles: [demoBundle(new Date(Date.now() - 60_000).toISOString())],
    storedAt: new Date().toISOString(),
  });
  return key;
}
