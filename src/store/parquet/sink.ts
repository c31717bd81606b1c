// Where the Parquet files go. Runtime-free, so the pipeline runs wherever a sink can be written:
// a local folder (file-sink.ts), an object store (the edge's).

export interface FileSink {
  /**
   * Stores `bytes` at `path` (relative, "/"-separated), replacing any file there; readers see the
   * old file or the whole new one, never part of it. Rejects when the bytes may not be stored.
   */
  write(path: string, bytes: Uint8Array): Promise<void>;
  /** Every stored file's path (none of a write under way). */
  list(): Promise<string[]>;
  /** Deletes the file at `path`; a path with no file is fine. */
  remove(path: string): Promise<void>;
}
