// What an admin operation answers when it cannot be done: the contract's error code and message,
// and for refused input every problem with its path, so the CLI prints the same list whether it
// worked on the store itself or through the admin API.
import type { BundleProblem } from "../../bundle/validate.js";

export type RefusalCode = "BAD_REQUEST" | "NOT_FOUND";

export class AdminRefusal extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly problems: readonly BundleProblem[] = [],
  ) {
    super(message);
    this.name = "AdminRefusal";
  }
}

/** Refused input: the message lists every problem (the HTTP answer bounds its length). */
export function refusedInput(problems: readonly BundleProblem[]): AdminRefusal {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  return new AdminRefusal("BAD_REQUEST", `refused, nothing was written (${count}): ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`, problems);
}
