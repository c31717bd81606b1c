// The reading verbs' way to the events (`events list|count|discovered`, `report`, `results`): the
// store for the checkpoint and the log's tail, the Parquet archive's folder for the rest, both
// read by an in-memory DuckDB of the command's own (src/store/columnar/event-view.ts).
import { join } from "node:path";
import { EventView } from "../store/columnar/event-view.js";
import type { DuckSettings } from "../store/columnar/duck.js";
import type { OpenedStores } from "../store/open-stores.js";
import { UsageError, integerOption } from "./args.js";
import { type StoreWhere, withOpenedStores } from "./store-access.js";

export const READ_OPTIONS = {
  parquet: { type: "string" },
  "memory-limit": { type: "string" },
  threads: { type: "string" },
} as const;

/** The reading options' lines of a usage, their text starting at `column`. */
export function readHelp(column: number): string {
  const pad = (option: string) => `  ${option.padEnd(column - 2)}`;
  return `${pad("--parquet DIR")}the Parquet archive's folder (default DATA/parquet; on a shared store, the servers' --parquet)
${pad("--memory-limit M")}DuckDB's memory for the read: 512MB, 4GB (default half the machine's)
${pad("--threads N")}DuckDB's threads (default one per core)`;
}

export interface ReadWhere extends StoreWhere {
  readonly parquet?: string;
  readonly "memory-limit"?: string;
  readonly threads?: string;
}

const UNITS: Readonly<Record<string, number>> = { KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KIB: 2 ** 10, MIB: 2 ** 20, GIB: 2 ** 30, TIB: 2 ** 40 };
const MAX_THREADS = 1_024;

export function duckSettings(where: ReadWhere, usage: string): DuckSettings {
  const settings: { memoryBytes?: number; threads?: number } = {};
  const memory = where["memory-limit"];
  if (memory !== undefined) {
    const match = /^(\d+(?:\.\d+)?)\s*([KMGT]i?B)$/i.exec(memory.trim());
    const bytes = match === null ? Number.NaN : Number(match[1]) * UNITS[match[2]!.toUpperCase()]!;
    if (!(bytes >= 2 ** 20)) throw new UsageError(`--memory-limit must be a size of at least 1MiB like 512MB or 4GB, got "${memory}"`, usage);
    settings.memoryBytes = bytes;
  }
  if (where.threads !== undefined) settings.threads = integerOption(where.threads, "--threads", { min: 1, max: MAX_THREADS, usage });
  return settings;
}

/** Opens the store and a view of its events for one command; closes both after `use`. */
export async function withEventView<T>(where: ReadWhere, usage: string, use: (view: EventView, stores: OpenedStores) => Promise<T>): Promise<T> {
  const settings = duckSettings(where, usage);
  return withOpenedStores(where, "existing", async (stores) => {
    const view = await EventView.open({ events: stores.events, parquetDir: where.parquet ?? join(where.data, "parquet"), settings });
    try {
      return await use(view, stores);
    } finally {
      view.close();
    }
  });
}
