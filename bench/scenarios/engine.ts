// The inputs every engine benchmark hashes or samples: realistic unit ids, layer salts and
// bandit arms. Ids come from a fixed seed so successive runs (and machines) hash the same bytes.
import { seeded } from "../seeded.js";

/** Bucket count for every bucketing task; realistic for percentage splits, irrelevant to cost. */
export const BUCKET_COUNT = 10_000;

/** The salt of the single-salt tasks. */
export const SALT = "layer-checkout-2024";

/** The salts of a bundle with eight layers, as bucketSalts hashes one unit against them. */
export const LAYER_SALTS = [
  "layer-checkout-2024",
  "layer-pricing-2024",
  "layer-search-2024",
  "layer-onboard-2024",
  "layer-banner-2024",
  "layer-ranking-2024",
  "layer-promo-2024",
  "layer-email-2024",
] as const;

/**
 * salt + "." + unit at most 55 bytes: SHA-256's one-block case (55 + 0x80 + 8-byte length = 64).
 * The headline figures are for that case; longer keys take a second block and the streaming path.
 */
export const MAX_KEY_BYTES = 55;

const MAX_SALT_BYTES = Math.max(...LAYER_SALTS.map((s) => s.length));
export const UNIT_MIN_LENGTH = 8;
export const UNIT_MAX_LENGTH = Math.min(36, MAX_KEY_BYTES - MAX_SALT_BYTES - 1);

/** Power of two so tasks can cycle through the ids with a mask instead of a modulo. */
export const UNIT_COUNT = 4096;
export const UNIT_MASK = UNIT_COUNT - 1;

/** Units handed to one bucketUnits call. */
export const BATCH_SIZE = 1024;

// ASCII only, so string length equals UTF-8 byte length and the 55-byte bound holds by construction.
const ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

/** UNIT_COUNT ids of UNIT_MIN_LENGTH..UNIT_MAX_LENGTH ASCII characters, the same on every run. */
export function makeUnits(seed = 0x5eed): string[] {
  const random = seeded(seed);
  const span = UNIT_MAX_LENGTH - UNIT_MIN_LENGTH + 1;
  return Array.from({ length: UNIT_COUNT }, () => {
    const length = UNIT_MIN_LENGTH + Math.floor(random() * span);
    let id = "";
    for (let i = 0; i < length; i++) id += ALPHABET[Math.floor(random() * ALPHABET.length)];
    return id;
  });
}

/** The units split into consecutive batches of BATCH_SIZE, reused call after call. */
export function makeBatches(units: readonly string[]): string[][] {
  const batches: string[][] = [];
  for (let at = 0; at < units.length; at += BATCH_SIZE) batches.push(units.slice(at, at + BATCH_SIZE));
  return batches;
}

/** Four arms of a conversion test: alpha = conversions, beta = non-conversions (plus priors). */
export const ARMS = {
  kind: "beta",
  alpha: [12, 30, 7, 50],
  beta: [400, 380, 420, 350],
} as const;

/** Joint draws per winProbabilities call. */
export const WIN_DRAWS = 10_000;
