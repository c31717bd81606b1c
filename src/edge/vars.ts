// A Worker variable (wrangler.toml's [vars]) read as a number: its default when unset, a message
// naming it when it is not a number it may be.
export function numberVar(value: string | undefined, name: string, fallback: number, valid: (n: number) => boolean, what: string): number {
  if (value === undefined || value.trim() === "") return fallback;
  const n = Number(value);
  if (!valid(n)) throw new Error(`${name} must be ${what}, got "${value.slice(0, 40)}"`);
  return n;
}
