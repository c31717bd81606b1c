// An archive retention that dies by SIGKILL mid-rewrite, for archive-retention.test.ts:
//   before-rename:  the first rewritten file is whole at its temporary name, not yet renamed;
//   after-rename:   the first rewritten file has replaced its original, the others not yet.
// Usage: node --import tsx archive-retention-child.ts PARQUET_DIR CUTOFF_MS POINT
import { pruneArchive } from "../../src/store/parquet/archive-retention.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";

const [root, cutoff, point] = process.argv.slice(2) as [string, string, "before-rename" | "after-rename"];

class DyingSink extends NodeFileSink {
  override async writeWith(path: string, produce: (temp: string) => Promise<void>): Promise<void> {
    if (point === "before-rename") {
      await produce(`${this.pathOf(path)}.dying.tmp`.replace(/([^/]+)\.dying\.tmp$/, ".$1.dying.tmp"));
      process.kill(process.pid, "SIGKILL");
    }
    await super.writeWith(path, produce);
    process.kill(process.pid, "SIGKILL");
  }
}

await pruneArchive(new DyingSink(root), Number(cutoff));
process.exit(3); // not reached: the sink kills it at the first rewrite
