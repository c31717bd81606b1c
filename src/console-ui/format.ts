// How numbers, times and the bundle's rules read on the pages.
export const count = (n: number): string => n.toLocaleString("en-US");

export const percent = (share: number): string => `${(share * 100).toFixed(share * 100 < 10 && share * 100 !== Math.round(share * 100) ? 1 : 0)} %`;

export const time = (iso: string): string => iso.replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");

const OPERATORS: Record<string, string> = {
  $eq: "is",
  $ne: "is not",
  $gt: "is greater than",
  $gte: "is at least",
  $lt: "is less than",
  $lte: "is at most",
  $in: "is one of",
  $nin: "is none of",
  $regex: "matches",
  $inGroup: "is in the saved group",
  $notInGroup: "is not in the saved group",
  $all: "contains all of",
  $size: "has this many items:",
  $type: "is of type",
  $veq: "is version",
  $vne: "is not version",
  $vgt: "is a version after",
  $vgte: "is at least version",
  $vlt: "is a version before",
  $vlte: "is at most version",
};

const show = (value: unknown): string => (Array.isArray(value) ? value.map(show).join(", ") : typeof value === "string" ? value : JSON.stringify(value));

/** `country is one of US, CA and plan is pro`; unknown operators stay as JSON. */
export function conditionWords(condition: Record<string, unknown>): string {
  const parts = Object.entries(condition).map(([field, test]) => {
    if (field === "$and" || field === "$or") {
      const joined = (test as Record<string, unknown>[]).map(conditionWords).join(field === "$and" ? " and " : " or ");
      return `(${joined})`;
    }
    if (field === "$nor") return `none of (${(test as Record<string, unknown>[]).map(conditionWords).join(", ")})`;
    if (field === "$not") return `not (${conditionWords(test as Record<string, unknown>)})`;
    if (test === null || typeof test !== "object" || Array.isArray(test)) return `${field} is ${show(test)}`;
    return Object.entries(test as Record<string, unknown>)
      .map(([op, value]) => {
        if (op === "$exists") return `${field} ${value === true ? "is set" : "is not set"}`;
        const words = OPERATORS[op];
        return words === undefined ? `${field} ${op} ${show(value)}` : `${field} ${words} ${show(value)}`;
      })
      .join(" and ");
  });
  return parts.join(" and ");
}

/** Who a policy applies to, in words: every condition must hold. */
export function conditionsWords(conditions: readonly Record<string, unknown>[]): string {
  return conditions.length === 0 ? "everyone" : conditions.map(conditionWords).join(", and ");
}

export function scheduleWords(policy: { startAt?: string; endAt?: string }): string {
  if (policy.startAt === undefined && policy.endAt === undefined) return "always";
  if (policy.endAt === undefined) return `from ${time(policy.startAt!)}`;
  if (policy.startAt === undefined) return `until ${time(policy.endAt)}`;
  return `from ${time(policy.startAt)} until ${time(policy.endAt)}`;
}
