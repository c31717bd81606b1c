// The shape every verb has, so main can list them, print their help and run them alike.
import type { Io } from "./output.js";

export interface Verb {
  readonly name: string;
  /** One line for the list of verbs. */
  readonly summary: string;
  readonly usage: string;
  /** The exit code: 0 done, 1 refused or failed, 2 wrong usage. */
  run(args: readonly string[], io: Io): Promise<number>;
}

/** A verb made of sub-verbs: `vane keys create`. */
export interface VerbGroup {
  readonly name: string;
  readonly summary: string;
  readonly verbs: readonly Verb[];
}
