// Display helpers: dates in the administrator's locale and time zone, statuses as words.
const dateFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const dateTimeFmt = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });

export const formatDate = (iso: string | null | undefined, empty = '—'): string => (iso ? dateFmt.format(new Date(iso)) : empty);
export const formatDateTime = (iso: string | null | undefined, empty = '—'): string => (iso ? dateTimeFmt.format(new Date(iso)) : empty);

/** `in_progress` → `In progress`. */
export const statusLabel = (status: string): string => {
  const words = status.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
/** A time of day, e.g. "02:05:09 PM" (for "last updated"). */
export const formatTime = (d: Date): string => timeFmt.format(d);
