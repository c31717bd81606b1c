// The FileSink of a Node process: files under a local folder, `<dataDir>/parquet`.
import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { FileSink } from "./sink.js";

/** Path segments the sink accepts: no "..", no absolute paths, nothing a shell must quote (% is partitions.ts's escape, ~ its UNPUBLISHED_ENVS). */
const SEGMENT = /^[A-Za-z0-9_=.%~-]+$/;

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
    await this.writeWith(path, async (temp) => {
      const handle = await open(temp, "wx");
      try {
        await handle.writeFile(bytes);
      } finally {
        await handle.close();
      }
    });
  }

  /** The same for a file another writer makes (DuckDB's COPY): `produce` writes the temporary path. */
  async writeWith(path: string, produce: (temp: string) => Promise<unknown>): Promise<void> {
    const target = this.pathOf(path);
    const folder = dirname(target);
    const created = await mkdir(folder, { recursive: true });
    const temp = join(folder, `.${basename(target)}.${randomUUID()}.tmp`);
    try {
      await produce(temp);
      await syncPath(temp);
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await syncEntries(folder, created);
  }

  /**
   * The same for a file whose path is known once it is written: `produce` writes the temporary
   * path (under the root) and says the file's path, or undefined to have it deleted. Whether it
   * was kept.
   */
  async writeNamed(produce: (temp: string) => Promise<string | undefined>): Promise<boolean> {
    await mkdir(this.root, { recursive: true });
    const temp = join(this.root, `.written.${randomUUID()}.tmp`);
    let target: string;
    let created: string | undefined;
    try {
      const path = await produce(temp);
      if (path === undefined) {
        await rm(temp, { force: true });
        return false;
      }
      target = this.pathOf(path);
      created = await mkdir(dirname(target), { recursive: true });
      await syncPath(temp);
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await syncEntries(dirname(target), created);
    return true;
  }

  /** Every file's path under the root, "/"-separated; temporary (".…") files are not listed. */
  async list(): Promise<string[]> {
    let names: string[];
    try {
      names = await readdir(this.root, { recursive: true, withFileTypes: false });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return names.map((name) => name.split("\\").join("/")).filter((name) => name.endsWith(".parquet") && !name.split("/").some((part) => part.startsWith(".")));
  }

  /** Deletes the file and syncs its folder, so a crash does not bring it back beside its replacement. */
  async remove(path: string): Promise<void> {
    const target = this.pathOf(path);
    await rm(target, { force: true });
    if (process.platform !== "win32") await syncPath(dirname(target));
  }

  /** The absolute path of a sink path. */
  pathOf(path: string): string {
    return join(this.root, ...segments(path));
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
  await syncPath(folder);
  if (created === undefined) return;
  for (let child = folder; child !== dirname(child); child = dirname(child)) {
    await syncPath(dirname(child));
    if (child === created) break;
  }
}

/** fsync of a file or a folder (opened read-only: enough for fsync on Linux and macOS). */
async function syncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
