// Events refused one by one (the `validationErrors` of POST /v1/events), counted by reason in
// memory for the console's events page: per organization (and the key's project, when it is
// pinned to one), each reason the message with what the sender wrote taken out (`, got …`,
// quoted values, array indexes), so one mistake repeated is one line. Only invalid events cost
// anything; a valid batch passes an empty list. Per process and since it started.
import type { ValidationError } from "../event-batch.js";

/** Distinct reasons kept per organization and project; more count under OTHER. */
const MAX_REASONS = 50;
const MAX_REASON_CHARS = 160;
export const OTHER = "(other reasons)";

export interface ValidationFailure {
  readonly orgId: string;
  readonly projectId?: string;
  readonly reason: string;
  readonly count: number;
  /** ISO 8601, the last time an event was refused for it. */
  readonly lastSeen: string;
}

interface Tally {
  count: number;
  lastMs: number;
}

/** What a refusal's message says, without the sender's values: `unitKey must be a non-empty string`, `layers[].bucket must be …`. */
export function reasonOf(message: string): string {
  const reason = message
    .replace(/, got .*$/s, "")
    .replace(/"(?:[^"\\]|\\.)*"/g, "…")
    .replace(/\[\d+\]/g, "[]");
  return reason.length <= MAX_REASON_CHARS ? reason : `${reason.slice(0, MAX_REASON_CHARS)}…`;
}

export class ValidationFailures {
  /** `orgId \0 projectId` → reason → tally. */
  private readonly byScope = new Map<string, Map<string, Tally>>();

  constructor(private readonly now: () => number) {}

  /** Counts a request's refused events, for the key that sent them. */
  record(key: { readonly orgId: string; readonly projectId?: string }, errors: readonly ValidationError[]): void {
    if (errors.length === 0) return;
    const scope = `${key.orgId}\u0000${key.projectId ?? ""}`;
    let reasons = this.byScope.get(scope);
    if (reasons === undefined) this.byScope.set(scope, (reasons = new Map()));
    const now = this.now();
    for (const { error } of errors) {
      let reason = reasonOf(error);
      if (!reasons.has(reason) && reasons.size >= MAX_REASONS) reason = OTHER;
      const tally = reasons.get(reason);
      if (tally === undefined) reasons.set(reason, { count: 1, lastMs: now });
      else {
        tally.count += 1;
        tally.lastMs = now;
      }
    }
  }

  /** Every reason counted, most frequent first. */
  list(): ValidationFailure[] {
    const out: ValidationFailure[] = [];
    for (const [scope, reasons] of this.byScope) {
      const [orgId, projectId] = scope.split("\u0000") as [string, string];
      for (const [reason, tally] of reasons) {
        out.push({ orgId, ...(projectId !== "" && { projectId }), reason, count: tally.count, lastSeen: new Date(tally.lastMs).toISOString() });
      }
    }
    return out.sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  }
}
