// Nesting depth of JSON. JSON.parse accepts thousands of levels, but JSON.stringify (which the
// store runs on every event) overflows the stack near 5,000: without a limit one deep event would
// fail its whole batch as a "temporary" 503, again on every retry.

/** Deepest nesting of arrays and objects in a JSON text (brackets inside strings ignored). */
export function textDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22 /* " */) {
      // To the closing quote, the one after an even run of backslashes; indexOf skips the string's
      // text natively (most of a batch's characters are inside strings): ~1.8× faster than a loop.
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i === -1) return deepest;
        let backslashes = 0;
        while (text.charCodeAt(i - 1 - backslashes) === 0x5c /* \ */) backslashes++;
        if (backslashes % 2 === 0) break;
      }
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (++depth > deepest) deepest = depth;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      depth--;
    }
  }
  return deepest;
}

/** True when a parsed value nests arrays/objects more than `limit` levels (the value itself is level 1). */
export function deeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit <= 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (deeperThan(child, limit - 1)) return true;
  }
  return false;
}
