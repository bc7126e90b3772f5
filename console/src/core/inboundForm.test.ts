// The inbound number form: form text ↔ API bodies, checked with the shared InboundNumberCreate /
// InboundNumberUpdate schemas, the chosen bot's required variables, and API refusals on their fields.
import type { InboundNumber } from '@voice-platform/schemas/inbound.js';
import {
  emptyInboundForm,
  formVariables,
  inboundApiErrors,
  inboundCreateBody,
  inboundFieldErrors,
  inboundToForm,
  inboundUpdateBody,
  NEEDS_VALUE,
  parseAddresses,
  parseNumber,
  type BotChoice,
  type InboundForm,
} from './inboundForm.js';
import { detailFieldErrors } from './validation.js';

const bot: BotChoice = {
  id: 'b1',
  name: 'Reception',
  variables: [
    { name: 'customer_name', required: true, description: '' },
    { name: 'plan', required: false, description: '' },
  ],
};
const other: BotChoice = { id: 'b2', name: 'Sales', variables: [{ name: 'account', required: true, description: '' }] };

const stored: InboundNumber = {
  id: 'n1',
  number: '+4930123456789',
  bot_id: 'b1',
  variables: { customer_name: 'Ada' },
  allowed_addresses: ['203.0.113.0/24', '2001:db8::1'],
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-01T00:00:00.000Z',
};

const form = (patch: Partial<InboundForm> = {}): InboundForm => ({ ...emptyInboundForm('b1'), number: '+4930123456789', variables: { customer_name: 'Ada' }, ...patch });

describe('inbound number form model', () => {
  it('starts empty (with the only bot preselected when given) and shows a stored number one address per line', () => {
    expect(emptyInboundForm()).toEqual({ number: '', bot_id: '', variables: {}, allowed_addresses: '' });
    expect(emptyInboundForm('b1').bot_id).toBe('b1');
    expect(inboundToForm(stored)).toEqual({
      number: '+4930123456789',
      bot_id: 'b1',
      variables: { customer_name: 'Ada' },
      allowed_addresses: '203.0.113.0/24\n2001:db8::1',
    });
  });

  it('reads the number without visual separators, and addresses one per line, comma or space separated', () => {
    expect(parseNumber(' +49 (30) 1234-5678 ')).toBe('+493012345678');
    expect(parseNumber('0049 30 123')).toBe('004930123'); // kept for the schema to reject
    expect(parseAddresses('203.0.113.5\n\n 198.51.100.0/24, 2001:db8::/32;10.0.0.1 10.0.0.2\r\n')).toEqual([
      '203.0.113.5',
      '198.51.100.0/24',
      '2001:db8::/32',
      '10.0.0.1',
      '10.0.0.2',
    ]);
    expect(parseAddresses('  \n ')).toEqual([]);
  });

  it("sends the chosen bot's variables that have a value; without the bot's declaration, every value typed", () => {
    const f = form({ variables: { customer_name: 'Ada', plan: '', account: 'A-1' } });
    expect(formVariables(f, bot)).toEqual({ customer_name: 'Ada' });
    expect(formVariables(f, other)).toEqual({ account: 'A-1' });
    expect(formVariables(f, undefined)).toEqual({ customer_name: 'Ada', account: 'A-1' });
  });
});

describe('creating an inbound number', () => {
  it('builds the POST body: optional fields only when given', () => {
    expect(inboundCreateBody(form({ number: '+49 30 123456789' }), bot)).toEqual({
      body: { number: '+4930123456789', bot_id: 'b1', variables: { customer_name: 'Ada' } },
      errors: {},
    });
    expect(inboundCreateBody(form({ variables: { customer_name: 'Ada', plan: 'gold' }, allowed_addresses: '203.0.113.0/24\n::1' }), bot).body).toEqual({
      number: '+4930123456789',
      bot_id: 'b1',
      variables: { customer_name: 'Ada', plan: 'gold' },
      allowed_addresses: ['203.0.113.0/24', '::1'],
    });
    expect(inboundCreateBody(form({ bot_id: 'b2', variables: { account: 'A-1' } }), other).body).toEqual({ number: '+4930123456789', bot_id: 'b2', variables: { account: 'A-1' } });
  });

  it('names each problem on its field: number, bot, required variables, each bad address', () => {
    expect(inboundCreateBody(form({ number: '030 123' }), bot).errors).toEqual({
      number: 'Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.',
    });
    expect(inboundCreateBody(form({ bot_id: '', variables: {} }), undefined).errors.bot_id).toBe('Choose the bot that answers calls to this number.');
    expect(inboundCreateBody(form({ variables: { plan: 'gold' } }), bot).errors).toEqual({ 'variables.customer_name': NEEDS_VALUE });
    const bad = inboundCreateBody(form({ allowed_addresses: '203.0.113.0/24\n203.0.113.0/33' }), bot).errors;
    expect(bad).toEqual({ allowed_addresses: expect.stringMatching(/^203\.0\.113\.0\/33: Must be an IPv4 or IPv6 address, optionally with a prefix length/) });
    for (const wrong of ['sip.carrier.example', '256.0.0.1', '01.2.3.4', '2001:db8::/129', '1::2::3', 'fe80::1%eth0', '10.0.0.0/8/8']) {
      expect([wrong, inboundCreateBody(form({ allowed_addresses: wrong }), bot).errors.allowed_addresses]).toEqual([wrong, expect.stringContaining(`${wrong}: Must be an IPv4 or IPv6`)]);
    }
    for (const right of ['0.0.0.0/0', '255.255.255.255', '10.0.0.0/8', '::', '::1', '2001:db8::/32', 'fe80::1:2:3', '1:2:3:4:5:6:7:8/128']) {
      expect([right, inboundCreateBody(form({ allowed_addresses: right }), bot).errors]).toEqual([right, {}]);
    }
    expect(inboundCreateBody(form({ allowed_addresses: '10.0.0.1\n10.0.0.1' }), bot).errors).toEqual({ allowed_addresses: '10.0.0.1 is listed twice; list each address once.' });
    const many = Array.from({ length: 33 }, (_, i) => `10.0.0.${i}`).join('\n');
    expect(inboundCreateBody(form({ allowed_addresses: many }), bot).errors).toEqual({ allowed_addresses: 'At most 32 allowed.' });
  });
});

describe('editing an inbound number', () => {
  it('sends only what changed; nothing changed is an empty body', () => {
    expect(inboundUpdateBody(stored, inboundToForm(stored), bot)).toEqual({ body: {}, errors: {} });
    expect(inboundUpdateBody(stored, { ...inboundToForm(stored), number: '+49 30 1234567', allowed_addresses: '' }, bot)).toEqual({
      body: { number: '+49301234567', allowed_addresses: [] },
      errors: {},
    });
    expect(inboundUpdateBody(stored, { ...inboundToForm(stored), variables: { customer_name: 'Ada', plan: 'gold' } }, bot).body).toEqual({ variables: { customer_name: 'Ada', plan: 'gold' } });
  });

  it("another bot sends its variables only, and needs its required ones", () => {
    const switched = { ...inboundToForm(stored), bot_id: 'b2' };
    expect(inboundUpdateBody(stored, switched, other)).toEqual({ body: { bot_id: 'b2', variables: {} }, errors: { 'variables.account': NEEDS_VALUE } });
    expect(inboundUpdateBody(stored, { ...switched, variables: { ...switched.variables, account: 'A-1' } }, other)).toEqual({
      body: { bot_id: 'b2', variables: { account: 'A-1' } },
      errors: {},
    });
    // Without the bot's declaration (bots not loaded), stored values are kept as they are.
    expect(inboundUpdateBody(stored, { ...inboundToForm(stored), allowed_addresses: '::1' }, undefined)).toEqual({ body: { allowed_addresses: ['::1'] }, errors: {} });
  });

  it('checks the changed fields against the schema', () => {
    expect(inboundUpdateBody(stored, { ...inboundToForm(stored), allowed_addresses: '10.0.0.1\nnope' }, bot).errors).toEqual({
      allowed_addresses: expect.stringMatching(/^nope: Must be an IPv4 or IPv6 address/),
    });
    expect(inboundUpdateBody(stored, { ...inboundToForm(stored), number: '12345' }, bot).errors).toEqual({ number: expect.stringMatching(/^Start with \+ and the country code/) });
  });
});

describe('API refusals on their fields', () => {
  const apiErr = (code: string, details?: unknown) => ({ code, details, fieldErrors: detailFieldErrors(details) });

  it('puts variables_mismatch on the missing variables, bot_not_found on the picker, conflict on the number', () => {
    expect(inboundApiErrors(apiErr('variables_mismatch', { missing: ['customer_name'], unknown: ['nope'] }), [])).toEqual({ 'variables.customer_name': NEEDS_VALUE });
    expect(inboundApiErrors(apiErr('bot_not_found'), [])).toEqual({ bot_id: 'This bot no longer exists; choose another.' });
    expect(inboundApiErrors(apiErr('conflict', [{ field: 'number', message: '+4930123456789 is already inbound number n2' }]), [])).toEqual({ number: 'This number is already an inbound number.' });
    expect(inboundApiErrors(apiErr('service_unavailable'), [])).toEqual({});
  });

  it('names the address a 422 detail points at', () => {
    const errors = inboundApiErrors(apiErr('validation_failed', [{ field: 'allowed_addresses.1', message: 'must match pattern' }, { field: 'number', message: 'is bad' }]), ['10.0.0.1', 'x']);
    expect(errors).toEqual({ allowed_addresses: 'x: Must match pattern.', number: 'Is bad.' });
    expect(inboundFieldErrors({ 'allowed_addresses.5': 'Bad.' }, ['10.0.0.1'])).toEqual({ allowed_addresses: 'Bad.' });
    // A number that cannot exist: the backend's reason (libphonenumber), worded as the console's own check.
    expect(inboundApiErrors(apiErr('validation_failed', [{ field: 'number', message: 'too long' }]), [])).toEqual({ number: 'Too long for a phone number.' });
    expect(inboundApiErrors(apiErr('validation_failed', [{ field: 'number', message: 'invalid country calling code' }]), [])).toEqual({
      number: 'Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.',
    });
  });
});
