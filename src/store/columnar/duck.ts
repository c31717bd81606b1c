// The one door to DuckDB: an in-memory database per reader (or per Parquet writer), with its
// memory and threads bounded. No DuckDB database file is ever created: every reader scans the
// Parquet files and the log's tail into its own memory, so none blocks a server or another reader.
import { createRequire } from "node:module";
import { availableParallelism, totalmem } from "node:os";
import type { DuckDBConnection } from "@duckdb/node-api";

const requireCommonJs = createRequire(import.meta.url);

export interface DuckSettings {
  /** DuckDB's memory_limit in bytes; past it, operators spill to a temp folder or fail. */
  readonly memoryBytes?: number;
  readonly threads?: number;
  /** Where operators spill past memoryBytes; DuckDB's default is `.tmp` in the working folder. */
  readonly tempDirectory?: string;
  /**
   * Hands freed memory back to the system once a task or a bulk free leaves this much outstanding
   * (DuckDB's allocator_flush_threshold and allocator_bulk_deallocation_flush_threshold, 128 and
   * 512 MiB by default): DuckDB's jemalloc otherwise keeps what a long-lived process freed.
   */
  readonly flushBytes?: number;
}

/** Half the machine's memory: a reader beside a running server must leave it room. */
export function defaultMemoryBytes(): number {
  return Math.floor(totalmem() / 2);
}

export function defaultThreads(): number {
  return availableParallelism();
}

export interface Duck {
  readonly connection: DuckDBConnection;
  close(): void;
}

/**
 * DuckDB's node API, loaded at the first open, not at import: its library is 27 MiB resident in
 * every process that loads it, and a server that neither writes the archive nor reads events never
 * needs it (the Parquet copy loads it in its own child process: parquet-process.ts). Required as
 * the CommonJS it is: imported as a module, Node first scans its ~40 files for their exports
 * (cjs-module-lexer), ~0.15 s of CPU in every command that reads events.
 */
export function duckApi(): typeof import("@duckdb/node-api") {
  return requireCommonJs("@duckdb/node-api") as typeof import("@duckdb/node-api");
}

export async function openDuck(settings: DuckSettings = {}): Promise<Duck> {
  const memoryBytes = settings.memoryBytes ?? defaultMemoryBytes();
  const threads = settings.threads ?? defaultThreads();
  const { DuckDBInstance } = duckApi();
  const instance = await DuckDBInstance.create(":memory:", {
    memory_limit: `${Math.max(1, Math.floor(memoryBytes / 1024 / 1024))}MiB`,
    threads: String(threads),
    ...(settings.tempDirectory === undefined ? {} : { temp_directory: settings.tempDirectory }),
    ...(settings.flushBytes === undefined ? {} : { allocator_flush_threshold: `${settings.flushBytes}B`, allocator_bulk_deallocation_flush_threshold: `${settings.flushBytes}B` }),
    // jemalloc's own thread hands freed pages back to the system after its decay time (~1 s), as
    // it otherwise does only while DuckDB allocates: an open DuckDB between two of the copy's
    // deliveries kept what the last one freed (docs/performance-history.md, memory).
    allocator_background_threads: "true",
    // Everything it needs (parquet, json) is linked in: it never downloads an extension.
    autoinstall_known_extensions: "false",
    autoload_known_extensions: "false",
  });
  let connection: DuckDBConnection;
  try {
    connection = await instance.connect();
  } catch (error) {
    instance.closeSync();
    throw error;
  }
  let open = true;
  return {
    connection,
    close() {
      if (!open) return;
      open = false;
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** A SQL string literal: paths and ids are data, quoted, never spliced raw. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
