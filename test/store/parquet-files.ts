// Reads back what the Parquet copy wrote under <dataDir>/parquet: every row of every file, raw (no
// choice among files: a duplicate left anywhere shows), read by DuckDB, which reads both the
// JavaScript writer's Snappy files and DuckDB's zstd ones. None before the copy first wrote: a
// server may wait for the Parquet lease of one killed before it.
import { join } from "node:path";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";

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

/** A fresh copy's delivery of the folder's store (its first run sweeps), with DuckDB writing. */
export async function deliverArchive(dataDir: string): Promise<void> {
  const stores = openSqliteStores({ dataDir });
  const sink = new NodeFileSink(join(dataDir, "parquet"));
  const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
  try {
    await new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, writeDelivery: writer.writeDelivery, intact: writer.intact }).catchUp();
  } finally {
    writer.close();
    await stores.close();
  }
}
