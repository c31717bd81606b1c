// A Worker variable (wrangler.toml's [vars]) read as a number: its default when unset, a message
// naming it when it is not a number it may be.
export interface NumberVar {
  /** The value when the variable is unset or empty. */
  readonly fallback: number;
  readonly valid: (n: number) => boolean;
  /** What a valid value is, for the message: "a number from 0 to 1". */
  readonly what: string;
}

export function numberVar(value: string | undefined, name: string, rule: NumberVar): number {
  if (value === undefined || value.trim() === "") return rule.fallback;
  const n = Number(value);
  if (!rule.valid(n)) throw new Error(`${name} must be ${rule.what}, got "${value.slice(0, 40)}"`);
  return n;
}
