// The stores the Parquet copy's process reads (parquet-worker.ts): the server's, with SQLite's page
// cache sized for a reader that reads the log once through.
import { type OpenedStores, openStores } from "../open-stores.js";
import type { ParquetOptions } from "./parquet-protocol.js";

/**
 * The copy's SQLite page cache, KiB: SQLite's own default, not better-sqlite3's 16,000. The copy
 * reads each page of the log once; while nothing else writes (a backlog caught up, the load over)
 * the cache kept every page it read, up to 16 MiB of the copy's malloc heap. At 2,000 its malloc
 * heap held 12–17 MiB less while it caught up (its RSS 6–17 less), at no CPU or instruction cost
 * measured; under load the server's commits empty the cache at each read anyway
 * (docs/performance.md, section 6, "Session 20").
 */
export const COPY_PAGE_CACHE_KIB = 2_000;

export function openCopyStores(options: Pick<ParquetOptions, "dataDir" | "storeUrl">): Promise<OpenedStores> {
  return openStores({ dataDir: options.dataDir, storeUrl: options.storeUrl }, { pageCacheKiB: COPY_PAGE_CACHE_KIB });
}
