// Calling windows in a time zone: a window is a set of weekdays and a local [start, end) time of day.
import type { CallingWindow, Weekday } from '@voice-platform/schemas';

const formatters = new Map<string, Intl.DateTimeFormat>();
const DAYS: Record<string, Weekday> = { Mon: 'mon', Tue: 'tue', Wed: 'wed', Thu: 'thu', Fri: 'fri', Sat: 'sat', Sun: 'sun' };

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    if (formatters.size >= 2000) formatters.clear(); // Intl takes any letter case: the names are not a closed set
    formatters.set(timeZone, f);
  }
  return f;
}

/** True when Intl knows the zone (IANA names and their aliases). */
export function isTimeZone(name: string): boolean {
  try {
    formatter(name);
    return true;
  } catch {
    return false;
  }
}

export const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** The weekday and minute of the day at `ms` in `timeZone`. */
function localTime(timeZone: string, ms: number): { day: Weekday; minute: number } {
  const parts = formatter(timeZone).formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return { day: DAYS[get('weekday')] ?? 'mon', minute: Number(get('hour')) * 60 + Number(get('minute')) };
}

/** Whether `ms` lies inside one of the windows in `timeZone`; no windows = always. */
export function inWindow(windows: CallingWindow[], timeZone: string, ms: number): boolean {
  if (windows.length === 0) return true;
  const { day, minute } = localTime(timeZone, ms);
  return windows.some((w) => w.days.includes(day) && minute >= minutesOf(w.start) && minute < minutesOf(w.end));
}
