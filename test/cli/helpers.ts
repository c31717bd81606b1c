// Running `main(argv)` in-process with its output captured, temp data folders, and files to feed it.
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Bundle } from "../../src/bundle/types.js";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { main } from "../../src/cli/main.js";
import { openSqliteStores, type SqliteStores } from "../../src/store/sqlite/index.js";

export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

export async function vane(...argv: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "vane-cli-"));
}

/** Writes `value` as JSON into a fresh temp folder; returns the file's path. */
export function jsonFile(value: unknown, name = "input.json"): string {
  const file = join(tempDir(), name);
  writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2));
  return file;
}

/** Opens the data folder's store, runs `use`, closes it. */
export async function inStore<T>(dataDir: string, use: (stores: SqliteStores) => Promise<T>): Promise<T> {
  const stores = openSqliteStores({ dataDir });
  try {
    return await use(stores);
  } finally {
    stores.close();
  }
}

export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex");

/** A valid secret of `kind`, distinct per `seed`. */
export function secret(kind: "pk" | "sk" | "mk" | "ak", seed: string): string {
  return `vane_${kind}_${sha256Hex(seed).slice(0, 40)}`;
}

export function bundleFor(projectId: string, version: string, env = "production"): Bundle {
  return { ...demoBundle(version), orgId: "org-1", projectId, env };
}

/** A valid bundle whose running policies hold 5000 bucket ranges: past the engine's 4096. */
export function oversizedBundle(): Bundle {
  const bundle = bundleFor("big", "2026-01-01T00:00:00Z");
  bundle.parameters = [];
  bundle.layers = Array.from({ length: 5 }, (_, l) => ({
    id: `l${l}`,
    policies: [
      {
        id: `p${l}`,
        key: `p${l}`,
        state: "running",
        kind: "static",
        conditions: [],
        allocations: Array.from({ length: 1000 }, (_, i) => ({ id: `a${l}-${i}`, name: `a${i}`, key: `a${i}`, bucketRange: [i, i] as [number, number], overrides: {} })),
      },
    ],
  }));
  return bundle;
}

/** The lines of a table's body whose first cell is `first`. */
export function rowOf(table: string, first: string): string {
  const row = table.split("\n").find((line) => line.startsWith(`${first} `));
  if (row === undefined) throw new Error(`no row for ${first} in:\n${table}`);
  return row;
}
