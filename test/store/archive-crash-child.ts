// A Parquet copy that dies by SIGKILL at one point of its work, for archive-crash.test.ts:
//   after-file:      right after a delivery's first file is renamed into place, before the checkpoint;
//   mid-compaction:  right after the compacted file is renamed into place, before its inputs go.
// Usage: node --import tsx archive-crash-child.ts DATA_DIR POINT
import { join } from "node:path";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";

const [dataDir, point] = process.argv.slice(2) as [string, "after-file" | "mid-compaction"];

class DyingSink extends NodeFileSink {
  compacting = false;
  override async writeWith(path: string, produce: (temp: string) => Promise<void>): Promise<void> {
    await super.writeWith(path, produce);
    if (point === "after-file" || this.compacting) process.kill(process.pid, "SIGKILL");
  }
}

const stores = openSqliteStores({ dataDir });
const sink = new DyingSink(join(dataDir, "parquet"));
const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
const pipeline = new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, writeDelivery: writer.writeDelivery, intact: writer.intact });
await pipeline.catchUp();
sink.compacting = true;
await writer.compact(await stores.events.checkpoint(pipeline.name));
process.exit(3); // not reached: the point above kills it
