// Random request contexts for the parity runs: unit values of every accepted shape (strings with
// non-ASCII and astral characters, numbers, long ids, missing, null, "") and the fields the
// bundles' conditions read, drawn from small pools so that each condition matches some contexts
// and not others. Contexts whose unit value has a type no unit can have (the server's 400) are
// kept apart, as `refused`. Every context survives JSON unchanged: it is sent over HTTP, to a
// page and to a worker, and each side must see the same thing.
import type { Random } from "./random.js";

export interface ParityCase {
  readonly context: Record<string, unknown>;
  /** Parameter keys asked for (POST /v1/resolve `parameters`); all when absent. */
  readonly parameters?: readonly string[];
}

export interface CaseSet {
  readonly cases: ParityCase[];
  /** Contexts with a unit value of an impossible type (decisions.md §2): refused, not resolved. */
  readonly refused: Record<string, unknown>[];
}

/** The context fields the bundles hash on. */
const UNIT_FIELDS = ["userId", "accountId", "companyId"] as const;
const ODD_UNIT_VALUES: readonly unknown[] = [true, false, { id: 1 }, [1, 2], []];
const COUNTRIES = ["US", "CA", "NL", "DE", "FR", "JP", "BR", "us", ""];
const PLANS = ["free", "pro", "gold", "platinum", "Gold"];
const VERSIONS = ["1.0.0", "1.9.9", "2.0.0", "2.0.0-beta.1", "2.10.1", "v3.0", "10.0.0", "2"];
const OSES = ["ios", "android", "windows", "linux", "iOS"];
const TAGS = ["beta", "vip", "new", "churn-risk", "BETA"];
const DOMAINS = ["example.com", "vane.dev", "EXAMPLE.COM", "test.org"];
const SKUS = ["sku-1", "sku-2", "sku-3", "gift"];
const NAME_PARTS = ["u", "ü", "用户", "😀", "user_", "Ω-"];

/**
 * `count` resolvable cases, and the refused contexts met on the way. `unitKeys` are the fields
 * the bundle hashes on (only those make a context refused); `parameterKeys` the bundle's
 * parameters, of which about one case in five asks for a few (plus, at times, an unknown key).
 */
export function makeCases(random: Random, count: number, keys: { unitKeys: readonly string[]; parameterKeys: readonly string[] }): CaseSet {
  const cases: ParityCase[] = [];
  const refused: Record<string, unknown>[] = [];
  while (cases.length < count) {
    const context = randomContext(random);
    if (keys.unitKeys.some((key) => isOddUnit(context[key]))) {
      refused.push(context);
      continue;
    }
    if (!random.chance(0.2)) {
      cases.push({ context });
      continue;
    }
    const parameters = random.some(keys.parameterKeys, 3);
    if (random.chance(0.1)) parameters.push("no.such.parameter");
    cases.push({ context, parameters });
  }
  return { cases, refused };
}

function isOddUnit(value: unknown): boolean {
  return value !== undefined && value !== null && typeof value !== "string" && typeof value !== "number";
}

function randomContext(random: Random): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  const set = (field: string, probability: number, value: () => unknown) => {
    if (random.chance(probability)) context[field] = value();
  };
  for (const field of UNIT_FIELDS) set(field, field === "userId" ? 0.97 : 0.8, () => unitValue(random, field));
  set("country", 0.9, () => random.pick(COUNTRIES));
  set("plan", 0.85, () => random.pick(PLANS));
  set("age", 0.85, () => (random.chance(0.05) ? String(random.int(13, 80)) : random.chance(0.03) ? null : random.int(13, 80)));
  set("appVersion", 0.9, () => random.pick(VERSIONS));
  set("device", 0.9, () => (random.chance(0.05) ? "mobile" : { os: random.pick(OSES), version: random.pick(VERSIONS), tablet: random.chance(0.3) }));
  set("tags", 0.8, () => (random.chance(0.05) ? "beta" : random.some(TAGS, 3)));
  set("email", 0.7, () => `${random.pick(["ana", "bo", "chen"])}${random.int(1, 99)}@${random.pick(DOMAINS)}`);
  set("beta", 0.6, () => (random.chance(0.1) ? "true" : random.chance(0.5)));
  set("score", 0.7, () => Math.round(random.next() * 10_000) / 100);
  set("purchases", 0.6, () => Array.from({ length: random.int(0, 3) }, () => ({ sku: random.pick(SKUS), price: random.int(1, 200) })));
  set("segment", 0.3, () => (random.chance(0.5) ? { name: "loyal", tier: 2 } : { tier: random.int(1, 3), name: "loyal" }));
  return context;
}

/** A unit value: mostly an id string, at times a number, empty, null or (rarely) an impossible type. */
function unitValue(random: Random, field: (typeof UNIT_FIELDS)[number]): unknown {
  const roll = random.next();
  if (roll < 0.01) return random.pick(ODD_UNIT_VALUES);
  if (roll < 0.02) return null;
  if (roll < 0.03) return "";
  if (roll < 0.09) return randomNumber(random);
  if (field === "companyId") return random.chance(0.75) ? random.int(1, 60) : `co-${random.int(1, 60)}`; // mostly numeric ids
  if (field === "accountId") return `acct-${random.int(0, 199)}`; // few accounts: many users share one
  return userId(random);
}

function randomNumber(random: Random): number {
  return random.pick([
    () => random.int(0, 1_000_000),
    () => -random.int(1, 1000),
    () => random.int(0, 10_000) / 8, // exact binary fractions: 0.125, 3.5, …
    () => Number.MAX_SAFE_INTEGER - random.int(0, 10),
    () => random.pick([1e21, 1.5e-7, 2 ** 64]), // String() gives exponent notation
  ])();
}

function userId(random: Random): string {
  const roll = random.next();
  if (roll < 0.0005) return "x".repeat(70_000 + random.int(0, 100)); // longer than the engine's input buffer
  if (roll < 0.01) return `long-${"abcdefghij".repeat(random.int(6, 30))}`; // several SHA-256 blocks
  if (roll < 0.05) return `${random.pick(NAME_PARTS)}${random.int(0, 99_999)}`;
  return `user-${random.int(0, 9_999_999)}`;
}
