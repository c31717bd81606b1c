// Two servers on one SQLite file: what `vane serve --workers 2` runs.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { describeSharedStore } from "./shared-store.js";

describeSharedStore("SQLite", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "vane-shared-"));
  return {
    server: { dataDir },
    open: async () => openSqliteStores({ dataDir }),
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
});
