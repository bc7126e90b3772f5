import { API_KEY_PATTERN, PHONE_NUMBER_PATTERN } from './index.js';

describe('shared formats', () => {
  const phone = new RegExp(PHONE_NUMBER_PATTERN);
  const key = new RegExp(API_KEY_PATTERN);

  it('accepts E.164 numbers and refuses the rest', () => {
    expect(phone.test('+4915112345678')).toBe(true);
    expect(phone.test('+1234567')).toBe(true);
    for (const bad of ['4915112345678', '+0123456789', '+123456', '+1234567890123456', '+12 345 678', '']) {
      expect(phone.test(bad)).toBe(false);
    }
  });

  it('matches only vx_ keys of exactly 32 alphanumerics', () => {
    expect(key.test(`vx_${'aZ09'.repeat(8)}`)).toBe(true);
    expect(key.test(`vx_${'a'.repeat(31)}`)).toBe(false);
    expect(key.test(`vx_${'a'.repeat(33)}`)).toBe(false);
    expect(key.test(`vx_${'a'.repeat(31)}-`)).toBe(false);
    expect(key.test(`xx_${'a'.repeat(32)}`)).toBe(false);
  });
});
