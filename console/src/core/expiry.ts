// API key expiry presets → the `expires_at` the backend expects (RFC 3339, or null for never).

const PRESET_LABELS = { never: 'Never', '7d': '7 days', '30d': '30 days', '90d': '90 days', '1y': '1 year', date: 'On a date…' } as const;
/** The presets in the order the form offers them. */
export const EXPIRY_PRESETS = (Object.keys(PRESET_LABELS) as Array<keyof typeof PRESET_LABELS>).map((value) => ({ value, label: PRESET_LABELS[value] }));
export type ExpiryPreset = (typeof EXPIRY_PRESETS)[number]['value'];

const DAY_MS = 86_400_000;

/**
 * `date` is a `YYYY-MM-DD` from a date input: the key stays valid through the end of that day in the
 * administrator's time zone. Returns undefined when the date is missing or malformed.
 */
export function expiresAtFor(preset: ExpiryPreset, now: Date, date = ''): string | null | undefined {
  switch (preset) {
    case 'never':
      return null;
    case '7d':
      return new Date(now.getTime() + 7 * DAY_MS).toISOString();
    case '30d':
      return new Date(now.getTime() + 30 * DAY_MS).toISOString();
    case '90d':
      return new Date(now.getTime() + 90 * DAY_MS).toISOString();
    case '1y': {
      const d = new Date(now.getTime());
      d.setFullYear(d.getFullYear() + 1);
      return d.toISOString();
    }
    case 'date': {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
      if (!m) return undefined;
      const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
      const end = new Date(y, mo - 1, d, 23, 59, 59, 999);
      // Reject rollovers such as 2025-02-31.
      if (end.getFullYear() !== y || end.getMonth() !== mo - 1 || end.getDate() !== d) return undefined;
      return end.toISOString();
    }
  }
}

/** A date as a date input's value (`YYYY-MM-DD`), in the administrator's time zone. */
export function dateInputValue(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}
