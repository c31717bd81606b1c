// Reads back what the Parquet copy wrote under <dataDir>/parquet: every row of every file, raw (no
// choice among files: a duplicate left anywhere shows), read by DuckDB, which reads both the
// JavaScript writer's Snappy files and DuckDB's zstd ones. None before the copy first wrote: a
// server may wait for the Parquet lease of one killed before it.
import { join } from "node:path";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";

export async function parquetRows(dataDir: string): Promise<Record<string, unknown>[]> {
  const sink = new NodeFileSink(join(dataDir, "parquet"));
  const files = (await sink.list()).map((path) => sqlString(sink.pathOf(path)));
  if (files.length === 0) return [];
  const duck = await openDuck({ threads: 1, memoryBytes: 256 * 1024 * 1024 });
  try {
    return (await duck.connection.runAndReadAll(`SELECT * FROM read_parquet([${files.join(", ")}], union_by_name = true) ORDER BY seq`)).getRowObjectsJS();
  } finally {
    duck.close();
  }
}
