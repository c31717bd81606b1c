// What the commands the CLI prints need to work when pasted: the way to run vane from the user's
// shell, and the options that reach the store of the command that printed them (the shared store
// a server uses, `--store URL` with its password as ***, or a --data folder other than the
// default).
import { basename, delimiter, dirname, resolve, sep } from "node:path";
import { describeStoreUrl } from "../store/open-stores.js";
import { DEFAULT_DATA_DIR } from "./args.js";
import { checkDataFolder, newStoreNote } from "./data-folder.js";
import type { Io } from "./output.js";
import { storeUrlOf, type StoreWhere } from "./store-access.js";

/**
 * `vane` when this process was started as `vane` from the PATH (the image's symlink, `npm link`, a
 * global install); else `npx vane`, which runs the vane of a clone or of a project's node_modules.
 */
export function vaneCommand(): string {
  const script = resolve(process.argv[1] ?? "");
  const dirs = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "" && !dir.endsWith(`node_modules${sep}.bin`));
  const onPath = basename(script) === "vane" && dirs.some((dir) => resolve(dir) === dirname(script));
  return onPath ? "vane" : "npx vane";
}

/** " --store URL", " --data DIR", or "" for the default folder: to append to a printed `vane` command. */
export function whereArgs(where: StoreWhere): string {
  if (where.remote !== undefined) return ` --remote ${shellWord(where.remote)}`;
  const url = storeUrlOf(where);
  if (url !== undefined) return ` --store ${shellWord(describeStoreUrl(url))}`;
  return where.data === DEFAULT_DATA_DIR ? "" : ` --data ${shellWord(where.data)}`;
}

/** What *** in a printed --store stands for; "" when the URL has no password. */
export function passwordNote(where: StoreWhere): string {
  const url = storeUrlOf(where);
  return url !== undefined && describeStoreUrl(url).includes(":***@") ? "(*** stands for the store's password: put it there, or set VANE_STORE and leave --store out)" : "";
}

/** Before a verb writes: refuses a folder that cannot be one, and says on stderr when it has no store yet, so a new one is made that no server uses. */
export function noteNewStore(where: StoreWhere, io: Io): void {
  if (where.remote !== undefined) return; // the server's store, not a folder here
  const location = { data: where.data, storeUrl: storeUrlOf(where) };
  checkDataFolder(location);
  const note = newStoreNote(location);
  if (note !== undefined) io.err(note);
}

export function shellWord(text: string): string {
  return /^[\w./:@-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}
