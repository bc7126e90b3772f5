import { editExpiryOptions, emptyKeyCreateForm, keyCreateBody, keyEditBody, keyEditForm, SCOPE_DESCRIPTIONS, type KeyEditForm } from './apiKeyEdit.js';

const now = new Date('2025-03-10T12:00:00.000Z');
const key = { name: 'CRM', expires_at: '2025-06-30T23:59:59.999Z', scopes: ['dialout', 'calls:read'] } satisfies Parameters<typeof keyEditForm>[0];
const unchanged = { name: 'CRM', preset: 'keep', date: '', scopes: ['dialout', 'calls:read'] } satisfies KeyEditForm;

describe('API key creation', () => {
  it('starts with the default scopes, dialout and calls:read, and describes every scope', () => {
    expect(emptyKeyCreateForm()).toEqual({ name: '', preset: 'never', date: '', scopes: ['dialout', 'calls:read'] });
    expect(Object.keys(SCOPE_DESCRIPTIONS)).toEqual(['dialout', 'calls:read', 'test_calls', 'campaigns', 'calls:control']);
  });

  it('sends the name, the expiry and the chosen scopes in the API’s order', () => {
    expect(keyCreateBody({ name: ' CRM ', preset: '7d', date: '', scopes: ['test_calls', 'calls:read'] }, now)).toEqual({
      body: { name: 'CRM', expires_at: '2025-03-17T12:00:00.000Z', scopes: ['calls:read', 'test_calls'] },
      errors: {},
    });
    expect(keyCreateBody({ ...emptyKeyCreateForm(), name: 'CRM' }, now)).toEqual({ body: { name: 'CRM', expires_at: null, scopes: ['dialout', 'calls:read'] }, errors: {} });
  });

  it('asks for at least one scope, beside the other fields’ problems, before anything is sent', () => {
    expect(keyCreateBody({ name: 'CRM', preset: 'never', date: '', scopes: [] }, now).errors).toEqual({ scopes: 'Choose at least one scope.' });
    expect(keyCreateBody({ name: ' ', preset: 'date', date: '', scopes: [] }, now).errors).toEqual({
      name: 'This field is required.',
      expires_at: 'Choose a valid date.',
      scopes: 'Choose at least one scope.',
    });
  });
});

describe('API key edit', () => {
  it('starts from the key: its name, no expiry change, and its expiry day for the date picker', () => {
    expect(keyEditForm(key)).toEqual({ name: 'CRM', preset: 'keep', date: expect.stringMatching(/^2025-0[67]-\d\d$/), scopes: ['dialout', 'calls:read'] });
    expect(keyEditForm({ name: 'CRM', expires_at: null, scopes: ['campaigns'] })).toEqual({ name: 'CRM', preset: 'keep', date: '', scopes: ['campaigns'] });
  });

  it('offers "no change" first, then the creation presets', () => {
    expect(editExpiryOptions('never expires').map((o) => o.label)).toEqual(['No change (never expires)', 'Never', '7 days', '30 days', '90 days', '1 year', 'On a date…']);
  });

  it('sends only what changes', () => {
    expect(keyEditBody(key, { ...unchanged, name: ' CRM ' }, now)).toEqual({ body: {}, errors: {} });
    expect(keyEditBody(key, { ...unchanged, name: 'CRM v2' }, now)).toEqual({ body: { name: 'CRM v2' }, errors: {} });
    expect(keyEditBody(key, { ...unchanged, preset: '7d' }, now)).toEqual({ body: { expires_at: '2025-03-17T12:00:00.000Z' }, errors: {} });
    expect(keyEditBody(key, { ...unchanged, preset: 'never' }, now)).toEqual({ body: { expires_at: null }, errors: {} });
    expect(keyEditBody({ ...key, expires_at: null }, { ...unchanged, preset: 'never' }, now)).toEqual({ body: {}, errors: {} });
  });

  it('sends the scopes only when the set changed, in the API’s order', () => {
    expect(keyEditBody(key, { ...unchanged, scopes: ['calls:read', 'dialout'] }, now)).toEqual({ body: {}, errors: {} });
    expect(keyEditBody(key, { ...unchanged, scopes: ['test_calls', 'dialout', 'calls:read'] }, now)).toEqual({
      body: { scopes: ['dialout', 'calls:read', 'test_calls'] },
      errors: {},
    });
    expect(keyEditBody(key, { ...unchanged, name: 'CRM v2', scopes: ['calls:read'] }, now)).toEqual({ body: { name: 'CRM v2', scopes: ['calls:read'] }, errors: {} });
  });

  it('names each problem on its field', () => {
    expect(keyEditBody(key, { ...unchanged, scopes: [] }, now)).toEqual({ body: {}, errors: { scopes: 'Choose at least one scope.' } });
    expect(keyEditBody(key, { ...unchanged, name: '  ' }, now).errors).toEqual({ name: 'This field is required.' });
    expect(keyEditBody(key, { ...unchanged, preset: 'date' }, now).errors).toEqual({ expires_at: 'Choose a valid date.' });
    expect(keyEditBody(key, { ...unchanged, preset: 'date', date: '2020-01-01' }, now).errors).toEqual({ expires_at: 'Must be in the future.' });
    expect(keyEditBody(key, { ...unchanged, name: 'x'.repeat(201), preset: 'date', date: '2099-12-31' }, now)).toEqual({
      body: { name: 'x'.repeat(201), expires_at: new Date(2099, 11, 31, 23, 59, 59, 999).toISOString() },
      errors: { name: 'Must be at most 200 characters.' },
    });
  });
});
