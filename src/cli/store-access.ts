// The verbs' way into the store: the data folder's SQLite file a running server also uses (WAL
// lets both work at once), the shared store named by --store / VANE_STORE, or a server's admin API
// named by --remote (the token from VANE_ADMIN_TOKEN). Verbs get the same two things from each:
// the stored bundles to read, and the admin operations, run here on the store or by the server.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadEngine } from "../engine/loader.js";
import { localOperations } from "../server/admin/local-operations.js";
import { columnarReads } from "../server/columnar-reads.js";
import type { AdminOperations } from "../server/admin/operations.js";
import type { Sha256 } from "../server/auth/api-key.js";
import { type OpenedStores, StoreUrlError, describeStoreUrl, openStores } from "../store/open-stores.js";
import { DB_FILE_NAME } from "../store/sqlite/index.js";
import type { BundleStore } from "../store/types.js";
import { CliError, STORE_OPTIONS } from "./args.js";
import { checkDataFolder } from "./data-folder.js";
import { AdminClient } from "./remote/admin-client.js";
import { RemoteBundles } from "./remote/remote-bundles.js";
import { remoteOperations } from "./remote/remote-operations.js";

export const nodeSha256: Sha256 = (bytes) => createHash("sha256").update(bytes).digest();

/** A verb's store options (args.ts STORE_OPTIONS, and --remote for the verbs that take it). */
export interface StoreWhere {
  readonly data: string;
  readonly store?: string;
  readonly remote?: string;
}

/** The store options of a verb that can also work through a server's admin API. */
export const REMOTE_STORE_OPTIONS = { ...STORE_OPTIONS, remote: { type: "string" } } as const;

/** The --remote lines of a usage, its text starting at `column` like the other options'. */
export function remoteHelp(column: number): string {
  const option = "--remote URL";
  const indent = " ".repeat(column);
  // An option as wide as its column gets a line of its own, as `vane serve` lays out its long ones.
  const lead = option.length + 4 > column ? `  ${option}\n${indent}` : `  ${option.padEnd(column - 2)}`;
  return `${lead}work through the admin API of the server at URL instead, with the
${indent}token in VANE_ADMIN_TOKEN`;
}

/** What a verb works with, wherever the store is. */
export interface VerbStores {
  /** The stored bundles, to read: publishing goes through `admin`. */
  readonly bundles: BundleStore;
  readonly admin: AdminOperations;
}

/**
 * "existing": reading verbs, revoke and rotate refuse a folder without vane.db, so a mistyped
 * --data says so instead of quietly creating an empty store. "create": import, put and create.
 */
export type StoreNeed = "existing" | "create";

/** --store, else VANE_STORE; undefined for the data folder's SQLite file. */
export function storeUrlOf(where: StoreWhere): string | undefined {
  const url = where.store ?? process.env.VANE_STORE;
  return url === undefined || url === "" ? undefined : url;
}

/** Where the verb worked, for its messages (a URL without its password). */
export function describeStore(where: StoreWhere): string {
  if (where.remote !== undefined) return where.remote;
  const url = storeUrlOf(where);
  return url === undefined ? resolve(where.data) : describeStoreUrl(url);
}

/** Whether there is a store to read: a shared store or a server always is (reaching it says when it is not there). */
export function storeExists(where: StoreWhere): boolean {
  return where.remote !== undefined || storeUrlOf(where) !== undefined || existsSync(join(where.data, DB_FILE_NAME));
}

/** The verb's stores: through the admin API with --remote, else opened for it and closed after. */
export async function withStores<T>(where: StoreWhere, need: StoreNeed, use: (stores: VerbStores) => Promise<T>): Promise<T> {
  if (where.remote !== undefined) return use(remoteStores({ ...where, remote: where.remote }));
  return withOpenedStores(where, need, (stores) =>
    use({ bundles: stores.bundles, admin: localOperations(stores, { engine: () => loadEngine(), sha256: nodeSha256, now: Date.now }, columnarReads({ events: stores.events, parquetDir: join(where.data, "parquet") })) }),
  );
}

function remoteStores(where: StoreWhere & { remote: string }): VerbStores {
  if (where.store !== undefined) throw new CliError("--remote and --store name two stores: pass one");
  const token = process.env.VANE_ADMIN_TOKEN;
  if (token === undefined || token === "") throw new CliError("--remote needs the server's admin token in the VANE_ADMIN_TOKEN environment variable");
  const client = new AdminClient(where.remote, token);
  return { bundles: new RemoteBundles(client), admin: remoteOperations(client) };
}

/** The store itself, for what only runs beside it (serve, prune, results): opened for one command and closed after. */
export async function withOpenedStores<T>(where: StoreWhere, need: StoreNeed, use: (stores: OpenedStores) => Promise<T>): Promise<T> {
  checkDataFolder({ data: where.data, storeUrl: storeUrlOf(where) });
  if (need === "existing" && !storeExists(where)) {
    throw new CliError(`no Vane data in ${resolve(where.data)} (no ${DB_FILE_NAME}); pass --data DIR or --store URL, or start with \`vane serve\` or \`vane import FILE\``);
  }
  let stores: OpenedStores;
  try {
    stores = await openStores({ dataDir: where.data, storeUrl: storeUrlOf(where) });
  } catch (error) {
    if (error instanceof StoreUrlError) throw new CliError(error.message);
    if (storeUrlOf(where) !== undefined) throw new CliError(`cannot open the store at ${describeStore(where)}: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
  try {
    return await use(stores);
  } finally {
    await stores.close();
  }
}
