// What the console's results page asks of its host (src/cli/console-results.ts on Node): an experiment's
// results for a policy, with `vane results`'s options as the page's URL gives them.
import type { Policy } from "../../bundle/types.js";

export interface ResultsOptions {
  readonly metric: readonly string[];
  readonly guardrail: readonly string[];
  readonly window: readonly string[];
  readonly since?: string;
  readonly until?: string;
  /** ISO 8601: the end of the window when `until` is absent (the server's clock). */
  readonly now: string;
}

export interface ResultsSubjectOf {
  readonly policy: Policy;
  readonly layerId: string;
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
}

/** The results as JSON; an AdminRefusal for options it refuses. */
export type ConsoleResults = (subject: ResultsSubjectOf, options: ResultsOptions) => Promise<unknown>;
