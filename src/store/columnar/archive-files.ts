// The Parquet archive's files on a local disk (or a mounted share), listed for a reader, which
// scans cover()'s choice of them (src/store/parquet/partitions.ts says what a name holds).
import { NodeFileSink } from "../parquet/file-sink.js";
import { type ArchivePath, archivePath } from "../parquet/partitions.js";

/** Every archive file under `root` (none when it does not exist), with its absolute path. */
export async function listArchive(root: string): Promise<(ArchivePath & { readonly absolute: string })[]> {
  const sink = new NodeFileSink(root);
  const files: (ArchivePath & { readonly absolute: string })[] = [];
  for (const path of await sink.list()) {
    const file = archivePath(path);
    if (file !== undefined) files.push({ ...file, absolute: sink.pathOf(path) });
  }
  return files;
}
