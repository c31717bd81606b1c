// The FileSink of a Node process: files under a local folder, `<dataDir>/parquet`.
import { randomUUID } from "node:crypto";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { FileSink } from "./sink.js";

/** Path segments the sink accepts: no "..", no absolute paths, nothing a shell or a URL must quote. */
const SEGMENT = /^[A-Za-z0-9_=.-]+$/;

/** The sink for a server's data folder. */
export function fileSinkFor(dataDir: string): NodeFileSink {
  return new NodeFileSink(join(dataDir, "parquet"));
}

export class NodeFileSink implements FileSink {
  constructor(readonly root: string) {}

  /**
   * Writes a temporary file beside the target, syncs it, then renames it over the target: a reader
   * or a crash sees the old file or the new one. The temporary name starts with "." so that
   * warehouse readers (Spark, Hive, DuckDB globs of *.parquet) skip a leftover one.
   */
  async write(path: string, bytes: Uint8Array): Promise<void> {
    const target = join(this.root, ...segments(path));
    const folder = dirname(target);
    const created = await mkdir(folder, { recursive: true });
    const temp = join(folder, `.${basename(target)}.${randomUUID()}.tmp`);
    try {
      const handle = await open(temp, "wx");
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await syncEntries(folder, created);
  }
}

function segments(path: string): string[] {
  const parts = path.split("/");
  if (parts.some((part) => !SEGMENT.test(part) || part === "." || part === "..")) {
    throw new Error(`not a relative sink path: ${JSON.stringify(path)}`);
  }
  return parts;
}

/**
 * Syncs the folder holding the new file, and the parent of every folder mkdir created, so that the
 * file's name survives a power cut: the pipeline advances its checkpoint right after this.
 */
async function syncEntries(folder: string, created: string | undefined): Promise<void> {
  if (process.platform === "win32") return; // folders cannot be opened for fsync there
  await syncFolder(folder);
  if (created === undefined) return;
  for (let child = folder; child !== dirname(child); child = dirname(child)) {
    await syncFolder(dirname(child));
    if (child === created) break;
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
