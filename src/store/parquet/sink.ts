// Where the Parquet files go. Runtime-free, so the pipeline runs wherever a sink can be written:
// a local folder now (file-sink.ts), an object store later.

export interface FileSink {
  /**
   * Stores `bytes` at `path` (relative, "/"-separated), replacing any file there; readers see the
   * old file or the whole new one, never part of it. Rejects when the bytes may not be stored.
   */
  write(path: string, bytes: Uint8Array): Promise<void>;
}
