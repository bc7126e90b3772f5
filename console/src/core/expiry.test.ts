import { EXPIRY_PRESETS, expiresAtFor } from './expiry.js';

const DAY_MS = 86_400_000;
const now = new Date('2025-03-10T12:34:56.789Z');

describe('expiresAtFor', () => {
  it('offers never, 7, 30, 90 days, 1 year and a date', () => {
    expect(EXPIRY_PRESETS.map((p) => p.label)).toEqual(['Never', '7 days', '30 days', '90 days', '1 year', 'On a date…']);
  });

  it('never expires as null', () => {
    expect(expiresAtFor('never', now)).toBeNull();
  });

  it.each([
    ['7d', 7],
    ['30d', 30],
    ['90d', 90],
  ] as const)('%s adds %d days to now', (preset, days) => {
    expect(expiresAtFor(preset, now)).toBe(new Date(now.getTime() + days * DAY_MS).toISOString());
  });

  it('1 year is the same calendar moment a year later', () => {
    const iso = expiresAtFor('1y', now)!;
    const d = new Date(iso);
    expect(d.getFullYear()).toBe(now.getFullYear() + 1);
    expect([d.getMonth(), d.getDate(), d.getHours(), d.getMinutes()]).toEqual([now.getMonth(), now.getDate(), now.getHours(), now.getMinutes()]);
  });

  it('a date lasts through the end of that day, local time', () => {
    const d = new Date(expiresAtFor('date', now, '2026-01-31')!);
    expect([d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds()]).toEqual([2026, 0, 31, 23, 59, 59, 999]);
  });

  it.each(['', '2026-02-30', '31.01.2026', '2026-13-01'])('rejects the date %p', (date) => {
    expect(expiresAtFor('date', now, date)).toBeUndefined();
  });
});
