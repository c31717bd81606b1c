// Reads back what the Parquet pipeline wrote under <dataDir>/parquet: every row of every file
// (none before the copy first wrote: a server may wait for the Parquet lease of one killed before it).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parquetReadObjects } from "hyparquet";

export async function parquetRows(dataDir: string): Promise<Record<string, unknown>[]> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".parquet")) files.push(path);
    }
  };
  if (existsSync(join(dataDir, "parquet"))) walk(join(dataDir, "parquet"));
  const rows: Record<string, unknown>[] = [];
  for (const file of files) {
    const bytes = readFileSync(file);
    rows.push(...(await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) })));
  }
  return rows;
}
