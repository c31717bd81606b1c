// toISOString's form, "YYYY-MM-DDTHH:MM:SS.sssZ", written by arithmetic (its reading is
// store/iso-time-ms.ts). Each accepted event gets an `eventTime` (event-time.ts): through Date
// it cost ~450 ns to write (V8 formats with snprintf), the largest part of preparing an event. A
// differential test holds it to toISOString.

const DAY_MS = 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: toISOString writes other years with a sign and six digits. */
const FIRST_MS = -62_167_219_200_000;
const LAST_MS = 253_402_300_799_999;

const pad = (width: number) => Array.from({ length: 10 ** width }, (_, i) => String(i).padStart(width, "0"));
const TWO = pad(2);
const THREE = pad(3);

/** The day's "YYYY-MM-DDT", kept: a batch's times mostly fall on one day. */
let cachedDay = Number.NaN;
let cachedDate = "";

/** new Date(ms).toISOString(), for an integer ms. */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < FIRST_MS || ms > LAST_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    cachedDate = dateOf(day);
    cachedDay = day;
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${cachedDate}${TWO[hours]}:${TWO[minutes]}:${TWO[seconds]}.${THREE[rest - seconds * 1000]}Z`;
}

/** "YYYY-MM-DDT" of a day counted from 1970-01-01 (civil_from_days, H. Hinnant's calendar algorithms). */
function dateOf(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153); // months from March
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${TWO[Math.floor(year / 100)]}${TWO[year % 100]}-${TWO[month]}-${TWO[day]}T`;
}
