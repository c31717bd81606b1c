// The event timestamp check, by character codes: the grammar of bundle validation's
// isoTimestampMs (regex, Date arithmetic, ~750 ns) at a fraction of the cost (no allocation),
// since a batch of 1000 events checks 1000 timestamps. A differential test holds the two equal.
//
//   YYYY-MM-DD 'T' hh:mm [':' ss ['.' digits]] ('Z' | ('+' | '-') hh ':' mm)
//
// A real calendar date (no 2026-02-30), hours <= 23, minutes and seconds <= 59 (no leap
// second), an offset up to 23:59. A zone is required: a zone-less time is ambiguous.

import { COLON, DASH, DOT, LETTER_T, LETTER_Z, digitsAt, isDigit } from "../../store/iso-time-ms.js";

const PLUS = 43;
/** Length of `YYYY-MM-DDThh:mm`. */
const DATE_HOUR_MINUTE_CHARS = 16;
/** Length of `+hh:mm`. */
const OFFSET_CHARS = 6;

export function isIsoDateTime(s: string): boolean {
  if (s.length < DATE_HOUR_MINUTE_CHARS + 1) return false;
  if (s.charCodeAt(4) !== DASH || s.charCodeAt(7) !== DASH || s.charCodeAt(10) !== LETTER_T || s.charCodeAt(13) !== COLON) return false;
  const year = digitsAt(s, 0, 4);
  const month = digitsAt(s, 5, 2);
  const day = digitsAt(s, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (!inRange(digitsAt(s, 11, 2), 23) || !inRange(digitsAt(s, 14, 2), 59)) return false;
  let i = DATE_HOUR_MINUTE_CHARS;
  if (s.charCodeAt(i) === COLON) {
    if (!inRange(digitsAt(s, i + 1, 2), 59)) return false;
    i += 3;
    if (s.charCodeAt(i) === DOT) {
      const first = ++i;
      while (isDigit(s.charCodeAt(i))) i++;
      if (i === first) return false;
    }
  }
  return isZoneAt(s, i);
}

/** `Z`, or `±hh:mm`, ending the string at `i`. */
function isZoneAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c === LETTER_Z) return s.length === i + 1;
  if ((c !== PLUS && c !== DASH) || s.length !== i + OFFSET_CHARS || s.charCodeAt(i + 3) !== COLON) return false;
  return inRange(digitsAt(s, i + 1, 2), 23) && inRange(digitsAt(s, i + 4, 2), 59);
}

function inRange(v: number, max: number): boolean {
  return v >= 0 && v <= max;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
