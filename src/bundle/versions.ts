// Version ordering for the $veq/$vne/$vgt/$vgte/$vlt/$vlte condition operators. As in GrowthBook's
// paddedVersionString, a version maps to a padded string whose plain string order is the version
// order. A condition's operand is padded once, at compile time; each evaluation then walks the
// value's padded form character by character against it, without building that string.

export type VersionOperator = "$veq" | "$vne" | "$vgt" | "$vgte" | "$vlt" | "$vlte";

const RELATIONS: Readonly<Record<VersionOperator, (order: number) => boolean>> = {
  $veq: (order) => order === 0,
  $vne: (order) => order !== 0,
  $vgt: (order) => order > 0,
  $vgte: (order) => order >= 0,
  $vlt: (order) => order < 0,
  $vlte: (order) => order <= 0,
};

/** Build metadata ("+build.5") never affects order. Same pattern as GrowthBook's, so a line break stops it. */
const BUILD_METADATA = /\+.*$/;
/** Numeric parts are left-padded with spaces to this width so that " 9" < "10" as strings. */
const NUMERIC_WIDTH = 5;
const SPACE = 0x20;
const DASH = 0x2d;
const DOT = 0x2e;
const TILDE = 0x7e;

/** A test of a value against `operand` under `op`; the operand is padded here, once. */
export function versionTest(op: VersionOperator, operand: unknown): (value: unknown) => boolean {
  const padded = padVersion(operand);
  const holds = RELATIONS[op];
  return (value) => holds(compareVersion(value, padded));
}

/**
 * "v1.2.3-rc.1+build" -> "    1-    2-    3-rc-    1". Parts split on "-" and "."; a plain
 * major.minor.patch gets a "~" part so it sorts after its pre-releases ("~" is the largest
 * printable ASCII character).
 */
export function padVersion(input: unknown): string {
  const parts = bareVersion(input).split(/[-.]/);
  if (parts.length === 3) parts.push("~");
  return parts.map((part) => " ".repeat(padding(part, 0, part.length)) + part).join("-");
}

/** -1, 0 or 1: how padVersion(value) compares as a string with `padded`, an already padded operand. */
export function compareVersion(value: unknown, padded: string): number {
  const bare = bareVersion(value);
  let at = 0; // next character of `padded`
  let parts = 0;
  for (let start = 0; start <= bare.length; parts++) {
    const end = partEnd(bare, start);
    const separator = parts === 0 ? 0 : 1;
    const spaces = padding(bare, start, end);
    // The part as padVersion writes it: a "-" (but for the first part), `spaces` spaces, its text.
    for (let k = 0; k < separator + spaces + end - start; k++) {
      const code = k < separator ? DASH : k < separator + spaces ? SPACE : bare.charCodeAt(start + k - separator - spaces);
      const order = charOrder(code, padded.charCodeAt(at++));
      if (order !== 0) return order;
    }
    start = end + 1;
  }
  if (parts === 3) {
    const order = charOrder(DASH, padded.charCodeAt(at++)) || charOrder(TILDE, padded.charCodeAt(at++));
    if (order !== 0) return order;
  }
  return at < padded.length ? -1 : 0;
}

/** Numbers are accepted as text; any other non-string, or "", counts as version "0" (a missing attribute too). */
function bareVersion(input: unknown): string {
  const text = typeof input === "number" ? String(input) : input;
  if (typeof text !== "string" || text === "") return "0";
  const unprefixed = text.startsWith("v") ? text.slice(1) : text; // one leading "v"
  return unprefixed.includes("+") ? unprefixed.replace(BUILD_METADATA, "") : unprefixed;
}

function partEnd(bare: string, start: number): number {
  let end = start;
  while (end < bare.length && bare.charCodeAt(end) !== DASH && bare.charCodeAt(end) !== DOT) end++;
  return end;
}

/** Spaces in front of text[start, end): only a non-empty run of ASCII digits is padded. */
function padding(text: string, start: number, end: number): number {
  if (end === start) return 0;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return 0;
  }
  return Math.max(0, NUMERIC_WIDTH - (end - start));
}

/** `other` is NaN once the padded operand has ended: a longer string sorts after its prefix. */
function charOrder(code: number, other: number): number {
  if (code === other) return 0;
  return code < other ? -1 : 1;
}
