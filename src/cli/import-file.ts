// Reading the JSON files `vane import` and `vane bundles put` load (server/admin/import-checks.ts
// checks them).
import { readFileSync } from "node:fs";
import type { BundleProblem } from "../bundle/validate.js";
import { errorMessage } from "./output.js";

/** Problems with the file itself (unreadable, not JSON) are reported at this path. */
export const FILE_PATH = "(file)";

export type FileRead = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: BundleProblem };

/** The file's name in messages: `-` is stdin. */
export function fileLabel(file: string): string {
  return file === "-" ? "stdin" : file;
}

/** Reads and parses a JSON file, or stdin for `-`. */
export function readJsonFile(file: string): FileRead {
  let text: string;
  try {
    text = readFileSync(file === "-" ? process.stdin.fd : file, "utf8");
  } catch (error) {
    return { ok: false, problem: { path: FILE_PATH, message: `cannot read ${fileLabel(file)}: ${errorMessage(error)}` } };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    // V8 may quote a snippet of the text (`..."key":vane_sk_AB"...`), which could hold a secret.
    const reason = errorMessage(error).split(', ..."')[0];
    return { ok: false, problem: { path: FILE_PATH, message: `${fileLabel(file)} is not valid JSON: ${reason}` } };
  }
}
