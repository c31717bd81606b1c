// What the parity tests of texts written by hand (resolve-texts, decide-texts) draw from: strings
// JSON must escape, and contexts with such values, numbers and nulls.
import fc from "fast-check";

/** Strings that JSON must escape, or that are plain. */
export const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('q"uote', "back\\slash", "new\nline", "é ü 中", "\u2028", "\u0001", "emoji 😀"));

export const contexts = fc.record(
  {
    userId: fc.oneof(text, fc.integer()),
    accountId: text,
    country: fc.constantFrom("NL", "DE", "US"),
    plan: fc.oneof(text, fc.double(), fc.constant(null)),
    appVersion: fc.constantFrom("2.1.0", "1.0.0"),
  },
  { requiredKeys: [] },
);
