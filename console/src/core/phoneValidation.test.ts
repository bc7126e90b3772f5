// The console's phone number checks go through the shared libphonenumber function (schemas/src/phone.ts),
// the same check the backend makes: international formats pass, numbers that cannot exist are named.
import { phoneNumberError, validateCampaignCreate, validateInboundCreate, validateTrunkCreate } from './validation.js';
import { numberListError } from './phoneValidation.js';

describe('phone number fields', () => {
  it('accepts international formats with punctuation and the test phone numbers', () => {
    for (const n of ['+1 (415) 555-0100', '+4915112345678', '+15005558000', '+15005556000', '+15005557123', '+15550001111']) expect([n, phoneNumberError(n)]).toEqual([n, null]);
    expect(phoneNumberError('(415) 555-0100', 'US')).toBeNull();
  });

  it('names why a number cannot exist, on the field the backend would name', () => {
    expect(validateTrunkCreate({ name: 't', address: 'sip.example.com', numbers: ['+1 555 000 1000', '+1234', '415 555 0100'] })).toEqual({
      'numbers.1': 'Too short for a phone number.',
      'numbers.2': 'Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.',
    });
    expect(validateInboundCreate({ number: '+999 123 456', bot_id: 'b1' })).toEqual({ number: 'Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.' });
    expect(validateInboundCreate({ number: '+1 415 555 0100', bot_id: 'b1' })).toEqual({});
    const campaign = { name: 'c', bot_id: 'b1', timezone: 'UTC', windows: [], max_concurrency: 1, calls_per_second: 1, retry: { max_attempts: 1, delay_seconds: 60, on: [] } };
    expect(validateCampaignCreate({ ...campaign, from_number: '+1 415 555 0100 1234567' })).toEqual({ from_number: 'Too long for a phone number.' });
    expect(validateCampaignCreate({ ...campaign, from_number: '+1 415 555 0100', default_region: 'US' })).toEqual({});
    expect(validateCampaignCreate({ ...campaign, default_region: 'usa' })).toEqual({ default_region: 'Must be a two-letter country code in capitals, e.g. US or DE.' });
  });

  it('a list of numbers (do-not-call): each that cannot exist named with its reason, at most five', () => {
    expect(numberListError(['+4915112345678', '+15005553000'])).toBeNull();
    expect(numberListError(['+4915112345678', '12345', '+155501000000000'])).toBe(
      '12345: Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678. +155501000000000: Too long for a phone number.',
    );
    expect(numberListError(Array.from({ length: 7 }, (_, i) => `+1${i}`))).toMatch(/^\+10: Too short for a phone number\. .* And 2 more\.$/);
  });
});
