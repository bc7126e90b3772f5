import { editExpiryOptions, keyEditBody, keyEditForm } from './apiKeyEdit.js';

const now = new Date('2025-03-10T12:00:00.000Z');
const key = { name: 'CRM', expires_at: '2025-06-30T23:59:59.999Z' };

describe('API key edit', () => {
  it('starts from the key: its name, no expiry change, and its expiry day for the date picker', () => {
    expect(keyEditForm(key)).toEqual({ name: 'CRM', preset: 'keep', date: expect.stringMatching(/^2025-0[67]-\d\d$/) });
    expect(keyEditForm({ name: 'CRM', expires_at: null })).toEqual({ name: 'CRM', preset: 'keep', date: '' });
  });

  it('offers "no change" first, then the creation presets', () => {
    expect(editExpiryOptions('never expires').map((o) => o.label)).toEqual(['No change (never expires)', 'Never', '7 days', '30 days', '90 days', '1 year', 'On a date…']);
  });

  it('sends only what changes', () => {
    expect(keyEditBody(key, { name: ' CRM ', preset: 'keep', date: '' }, now)).toEqual({ body: {}, errors: {} });
    expect(keyEditBody(key, { name: 'CRM v2', preset: 'keep', date: '' }, now)).toEqual({ body: { name: 'CRM v2' }, errors: {} });
    expect(keyEditBody(key, { name: 'CRM', preset: '7d', date: '' }, now)).toEqual({ body: { expires_at: '2025-03-17T12:00:00.000Z' }, errors: {} });
    expect(keyEditBody(key, { name: 'CRM', preset: 'never', date: '' }, now)).toEqual({ body: { expires_at: null }, errors: {} });
    expect(keyEditBody({ name: 'CRM', expires_at: null }, { name: 'CRM', preset: 'never', date: '' }, now)).toEqual({ body: {}, errors: {} });
  });

  it('names each problem on its field', () => {
    expect(keyEditBody(key, { name: '  ', preset: 'keep', date: '' }, now).errors).toEqual({ name: 'This field is required.' });
    expect(keyEditBody(key, { name: 'CRM', preset: 'date', date: '' }, now).errors).toEqual({ expires_at: 'Choose a valid date.' });
    expect(keyEditBody(key, { name: 'CRM', preset: 'date', date: '2020-01-01' }, now).errors).toEqual({ expires_at: 'Must be in the future.' });
    expect(keyEditBody(key, { name: 'x'.repeat(201), preset: 'date', date: '2099-12-31' }, now)).toEqual({
      body: { name: 'x'.repeat(201), expires_at: new Date(2099, 11, 31, 23, 59, 59, 999).toISOString() },
      errors: { name: 'Must be at most 200 characters.' },
    });
  });
});
