import { isPhoneRegion, normalizePhoneNumber, phoneNumberRegion } from './phone.js';

describe('normalizePhoneNumber', () => {
  it('keeps E.164 and normalises international and national formats', () => {
    expect(normalizePhoneNumber('+4915112345678')).toEqual({ ok: true, e164: '+4915112345678' });
    expect(normalizePhoneNumber('+1 (415) 555-0100')).toEqual({ ok: true, e164: '+14155550100' });
    expect(normalizePhoneNumber('(415) 555-0100', 'US')).toEqual({ ok: true, e164: '+14155550100' });
    expect(normalizePhoneNumber('0151 1234 5678', 'DE')).toEqual({ ok: true, e164: '+4915112345678' });
    expect(normalizePhoneNumber('020 7946 0958', 'GB')).toEqual({ ok: true, e164: '+442079460958' });
  });

  it("keeps the test phone's numbers, which exist in no numbering plan (possible, not valid)", () => {
    for (const n of ['+15005558000', '+15005556000', '+15005557000', '+15005557999', '+15550001111', '+15550001000', '+15550109999']) {
      expect(normalizePhoneNumber(n)).toEqual({ ok: true, e164: n });
    }
  });

  it('names why a number cannot exist', () => {
    expect(normalizePhoneNumber('+1234')).toEqual({ ok: false, reason: 'too short' });
    expect(normalizePhoneNumber('123', 'US')).toEqual({ ok: false, reason: 'too short' });
    expect(normalizePhoneNumber('+1415555010000000')).toEqual({ ok: false, reason: 'too long' });
    expect(normalizePhoneNumber('+999123456')).toEqual({ ok: false, reason: 'invalid country calling code' });
    expect(normalizePhoneNumber('(415) 555-0100')).toEqual({ ok: false, reason: 'invalid country calling code' }); // national, no region
    expect(normalizePhoneNumber('abc', 'US')).toEqual({ ok: false, reason: 'not a number' });
    expect(normalizePhoneNumber('call +14155550100 now')).toEqual({ ok: false, reason: 'not a number' });
    expect(normalizePhoneNumber('+14155550100 ext. 12')).toEqual({ ok: false, reason: 'must not have an extension' });
    expect(normalizePhoneNumber('4155550100', 'XX')).toEqual({ ok: false, reason: 'unknown region' });
  });

  it('regions: a number\'s country, the main country of a shared code, and the ISO codes it knows', () => {
    expect(phoneNumberRegion('+4915112345678')).toBe('DE');
    expect(phoneNumberRegion('+14155550100')).toBe('US');
    expect(phoneNumberRegion('+15550001000')).toBe('US');
    expect(phoneNumberRegion('+442079460958')).toBe('GB');
    expect(phoneNumberRegion('nope')).toBeNull();
    expect([isPhoneRegion('US'), isPhoneRegion('DE'), isPhoneRegion('us'), isPhoneRegion('XX')]).toEqual([true, true, false, false]);
  });
});
