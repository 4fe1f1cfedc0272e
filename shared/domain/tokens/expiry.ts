/**
 * `expires_at` in the spec's formats, answered as ISO 8601:
 *   "M/D/YYYY h:mm:ss AM|PM +HH:MM" (offset optional: UTC without one), "M/D/YYYY" (12 AM UTC), ISO 8601.
 */
const DATE_TIME =
  /^(\d{1,2})\/(\d{1,2})\/(\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})\s*([AaPp][Mm])\s*(?:([+-])(\d{2}):?(\d{2}))?$/;
const SHORT_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): Date | undefined {
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const valid =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour < 24 &&
    minute < 60 &&
    second < 60;
  return valid ? date : undefined;
}

/** The instant an expires_at string names, or undefined when it is in none of the accepted formats. */
export function parseExpiresAt(input: string): Date | undefined {
  const text = input.trim();
  const dateTime = DATE_TIME.exec(text);
  if (dateTime) {
    const [, m, d, y, h, min, s, meridiem, sign, offH, offM] = dateTime;
    let hour = Number(h);
    if (hour < 1 || hour > 12) return undefined;
    if (meridiem?.toUpperCase() === "AM" && hour === 12) hour = 0;
    if (meridiem?.toUpperCase() === "PM" && hour !== 12) hour += 12;
    const local = utc(Number(y), Number(m), Number(d), hour, Number(min), Number(s));
    if (!local) return undefined;
    const offsetMinutes = sign ? (sign === "-" ? -1 : 1) * (Number(offH) * 60 + Number(offM)) : 0;
    return new Date(local.getTime() - offsetMinutes * 60_000);
  }
  const short = SHORT_DATE.exec(text);
  if (short) return utc(Number(short[3]), Number(short[1]), Number(short[2]));
  const isoDate = ISO_DATE.exec(text);
  if (isoDate) return utc(Number(isoDate[1]), Number(isoDate[2]), Number(isoDate[3]));
  if (ISO_DATE_TIME.test(text)) {
    // A date-time without a zone is read as UTC, like the spec's DateTime without an offset.
    const date = new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`);
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  return undefined;
}
