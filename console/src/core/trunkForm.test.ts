// The outbound trunk form: form text ↔ API bodies, checked with the shared OutboundTrunkCreate /
// OutboundTrunkUpdate schemas, and the write-only password (never prefilled, never in a message).
import type { OutboundTrunk } from '@voice-platform/schemas/trunks.js';
import { emptyTrunkForm, parseNumbers, TRANSPORT_OPTIONS, trunkCreateBody, trunkFieldErrors, trunkToForm, trunkUpdateBody, withTrunkNames, type TrunkForm } from './trunkForm.js';
import { detailFieldErrors } from './validation.js';

const PASSWORD = 'sup3r-Secret pass!';

const stored: OutboundTrunk = {
  id: 't1',
  name: 'Carrier EU',
  address: 'sip.carrier.example.com:5060',
  transport: 'udp',
  numbers: ['+4930123456789', '+4930123456780'],
  auth_username: 'acme',
  has_password: true,
  default: false,
  created_at: '2025-01-01T00:00:00.000Z',
  updated_at: '2025-01-01T00:00:00.000Z',
};

const form = (patch: Partial<TrunkForm> = {}): TrunkForm => ({
  ...emptyTrunkForm(),
  name: 'Carrier EU',
  address: 'sip.carrier.example.com:5060',
  numbers: '+4930123456789',
  ...patch,
});

describe('trunk form model', () => {
  it('starts empty on UDP, and offers the three transports', () => {
    const blankText = Object.fromEntries(['name', 'address', 'numbers', 'auth_username', 'auth_password'].map((k) => [k, '']));
    expect(emptyTrunkForm()).toEqual({ ...blankText, transport: 'udp', removeCredentials: false, makeDefault: false });
    expect(TRANSPORT_OPTIONS).toEqual([
      { value: 'udp', label: 'UDP' },
      { value: 'tcp', label: 'TCP' },
      { value: 'tls', label: 'TLS' },
    ]);
  });

  it('shows a stored trunk with one number per line and never a password', () => {
    const f = trunkToForm(stored);
    expect(f).toEqual({
      name: 'Carrier EU',
      address: 'sip.carrier.example.com:5060',
      transport: 'udp',
      numbers: '+4930123456789\n+4930123456780',
      auth_username: 'acme',
      auth_password: '',
      removeCredentials: false,
      makeDefault: false,
    });
    expect(trunkToForm({ ...stored, auth_username: null, has_password: false }).auth_username).toBe('');
  });

  it('reads numbers one per line (or comma separated), dropping blanks and visual separators', () => {
    expect(parseNumbers('+4930123456789\n\n  +49 (30) 1234-5678 \r\n+1.415.555.0100, +442071234567;')).toEqual([
      '+4930123456789',
      '+493012345678',
      '+14155550100',
      '+442071234567',
    ]);
    expect(parseNumbers('  \n ')).toEqual([]);
    expect(parseNumbers('0049 30 123')).toEqual(['004930123']); // kept for the schema to reject
  });
});

describe('creating a trunk', () => {
  it('builds the POST body: trimmed, transport always sent, optional fields only when given', () => {
    expect(trunkCreateBody(form({ name: '  Carrier EU ', address: ' sip.carrier.example.com:5060 ' }))).toEqual({
      body: { name: 'Carrier EU', address: 'sip.carrier.example.com:5060', transport: 'udp', numbers: ['+4930123456789'] },
      errors: {},
    });
    expect(trunkCreateBody(form({ transport: 'tls', auth_username: ' acme ', auth_password: PASSWORD, makeDefault: true, numbers: '+4930123456789\n+4930123456780' }))).toEqual({
      body: {
        name: 'Carrier EU',
        address: 'sip.carrier.example.com:5060',
        transport: 'tls',
        numbers: ['+4930123456789', '+4930123456780'],
        auth_username: 'acme',
        auth_password: PASSWORD, // as typed: spaces are part of a password
        default: true,
      },
      errors: {},
    });
  });

  it('accepts host names and IPv4 addresses with an optional port', () => {
    for (const address of ['sip.carrier.example.com', 'carrier', '203.0.113.5:5060', 'pbx-1.example.org:65535', '127.0.0.1:1']) {
      expect(trunkCreateBody(form({ address })).errors).toEqual({});
    }
  });

  it('names each problem on its form field, with the shared schema', () => {
    const addressError = 'Must be a host name or IPv4 address with an optional port (1 to 65535), e.g. sip.example.com or 203.0.113.5:5060. No sip: prefix.';
    for (const address of ['sip:carrier.example.com', 'carrier.example.com:0', 'carrier.example.com:65536', 'http://carrier.example.com/', 'user@carrier.example.com', 'carrier .example.com', '-bad.example.com']) {
      expect(trunkCreateBody(form({ address })).errors).toEqual({ address: addressError });
    }
    expect(trunkCreateBody(form({ address: '  ' })).errors).toEqual({ address: 'This field is required.' });
    expect(trunkCreateBody(emptyTrunkForm()).errors).toEqual({
      name: 'This field is required.',
      address: 'This field is required.',
      numbers: 'Add at least one.',
    });
    expect(trunkCreateBody(form({ name: 'x'.repeat(201) })).errors).toEqual({ name: 'Must be at most 200 characters.' });
    expect(trunkCreateBody(form({ auth_username: 'ac me', auth_password: 'pw' })).errors).toEqual({ auth_username: 'Printable characters only, without spaces.' });
    expect(trunkCreateBody(form({ auth_username: 'acme', auth_password: 'pässword' })).errors).toEqual({
      auth_password: 'Printable ASCII characters only (letters, digits, symbols and spaces).',
    });
    expect(trunkCreateBody(form({ auth_username: 'acme', auth_password: 'p'.repeat(257) })).errors).toEqual({ auth_password: 'Must be at most 256 characters.' });
  });

  it('names the number that is wrong, and a number listed twice', () => {
    expect(trunkCreateBody(form({ numbers: '+4930123456789\n030 1234567' })).errors).toEqual({
      numbers: '0301234567: Start with + and the country code, e.g. +1 415 555 0100 or +49 151 12345678.',
    });
    expect(trunkCreateBody(form({ numbers: '+4930123456789\n+49 30 123456789' })).errors).toEqual({
      numbers: '+4930123456789 is listed twice; list each number once.',
    });
    expect(trunkCreateBody(form({ numbers: Array.from({ length: 101 }, (_, i) => `+49301234${String(i).padStart(5, '0')}`).join('\n') })).errors).toEqual({
      numbers: 'At most 100 allowed.',
    });
  });

  it('wants the username that goes with a password, and never repeats the password in a message', () => {
    const { errors } = trunkCreateBody(form({ auth_password: PASSWORD }));
    expect(errors).toEqual({ auth_username: 'Enter the username that goes with the password.' });
    const bad = trunkCreateBody(form({ address: 'nope:99999', numbers: 'x', auth_password: `${PASSWORD}\u00e9` }));
    expect(Object.keys(bad.errors).sort()).toEqual(['address', 'auth_password', 'auth_username', 'numbers']);
    expect(JSON.stringify(bad.errors)).not.toContain(PASSWORD);
  });
});

describe('editing a trunk', () => {
  it('sends nothing when nothing changed, and an empty password keeps the stored one', () => {
    expect(trunkUpdateBody(stored, trunkToForm(stored))).toEqual({ body: {}, errors: {} });
    // The same numbers with other spacing are no change either.
    expect(trunkUpdateBody(stored, { ...trunkToForm(stored), numbers: '+49 30 123456789\n\n+49 30 123456780\n' })).toEqual({ body: {}, errors: {} });
  });

  it('sends only what changes', () => {
    const f = trunkToForm(stored);
    expect(trunkUpdateBody(stored, { ...f, numbers: '+4930123456780\n+4930123456781' }).body).toEqual({ numbers: ['+4930123456780', '+4930123456781'] });
    expect(trunkUpdateBody(stored, { ...f, numbers: '+4930123456780\n+4930123456789' }).body).toEqual({ numbers: ['+4930123456780', '+4930123456789'] }); // order matters: the first is the caller ID used by default
    expect(trunkUpdateBody(stored, { ...f, name: 'Carrier EU 2', address: '203.0.113.5', transport: 'tcp' }).body).toEqual({ name: 'Carrier EU 2', address: '203.0.113.5', transport: 'tcp' });
    expect(trunkUpdateBody(stored, { ...f, auth_password: PASSWORD }).body).toEqual({ auth_password: PASSWORD });
    expect(trunkUpdateBody(stored, { ...f, auth_username: 'acme2' }).body).toEqual({ auth_username: 'acme2' });
    expect(trunkUpdateBody(stored, { ...f, makeDefault: true }).body).toEqual({ default: true });
    expect(trunkUpdateBody({ ...stored, default: true }, { ...f, makeDefault: true }).body).toEqual({}); // already the default
  });

  it('removes the credentials with nulls, ignoring anything typed', () => {
    const f = { ...trunkToForm(stored), removeCredentials: true, auth_username: 'ignored', auth_password: PASSWORD };
    expect(trunkUpdateBody(stored, f)).toEqual({ body: { auth_username: null, auth_password: null }, errors: {} });
    // Nothing stored: nothing to remove.
    const bare = { ...stored, auth_username: null, has_password: false };
    expect(trunkUpdateBody(bare, { ...trunkToForm(bare), removeCredentials: true })).toEqual({ body: {}, errors: {} });
  });

  it('adds credentials to a trunk without any', () => {
    const bare = { ...stored, auth_username: null, has_password: false };
    expect(trunkUpdateBody(bare, { ...trunkToForm(bare), auth_username: 'acme', auth_password: PASSWORD }).body).toEqual({ auth_username: 'acme', auth_password: PASSWORD });
    expect(trunkUpdateBody(bare, { ...trunkToForm(bare), auth_password: PASSWORD }).errors).toEqual({ auth_username: 'Enter the username that goes with the password.' });
  });

  it('names each problem on its field, with the shared update schema', () => {
    const f = trunkToForm(stored);
    expect(trunkUpdateBody(stored, { ...f, auth_username: '  ' }).errors).toEqual({ auth_username: 'Enter a username, or choose “Remove the credentials”.' });
    expect(trunkUpdateBody(stored, { ...f, address: 'sip:carrier.example.com', numbers: '' }).errors).toEqual({
      address: 'Must be a host name or IPv4 address with an optional port (1 to 65535), e.g. sip.example.com or 203.0.113.5:5060. No sip: prefix.',
      numbers: 'Add at least one.',
    });
    expect(trunkUpdateBody(stored, { ...f, name: '' }).errors).toEqual({ name: 'This field is required.' });
    const bad = trunkUpdateBody(stored, { ...f, auth_password: `${PASSWORD}\u00e9` });
    expect(bad.errors).toEqual({ auth_password: 'Printable ASCII characters only (letters, digits, symbols and spaces).' });
    expect(JSON.stringify(bad.errors)).not.toContain(PASSWORD);
  });
});

describe('server errors on the form', () => {
  it('puts API 422 details on their fields, a single number’s on the numbers field', () => {
    const details = [
      { field: 'address', message: 'must match pattern' },
      // libphonenumber's reasons, as the backend names them (phoneInput.ts).
      { field: 'numbers.1', message: 'too short' },
      { field: 'numbers.3', message: 'invalid country calling code' },
    ];
    expect(trunkFieldErrors(detailFieldErrors(details), ['+4930123456789', '+12', 'x', 'y'])).toEqual({
      address: 'Must match pattern.',
      numbers: '+12: Too short for a phone number.',
    });
    expect(trunkFieldErrors(detailFieldErrors([{ field: 'numbers.1', message: 'is the same number as numbers.0 (+4930123456789)' }]), ['+4930123456789', '+49 30 123456789'])).toEqual({
      numbers: '+49 30 123456789: Is the same number as numbers.0 (+4930123456789).',
    });
    expect(trunkFieldErrors({ 'numbers.7': 'Bad.' }, [])).toEqual({ numbers: 'Bad.' });
  });

  it('names other trunks by name where the backend names them by id', () => {
    const others = [{ id: '65f0c0ffe', name: 'Other' }, { id: '65f0c0ffee', name: 'Carrier EU' }];
    expect(withTrunkNames('+4930123456789 already belongs to trunk 65f0c0ffee.', others)).toBe('+4930123456789 already belongs to trunk “Carrier EU”.');
    expect(withTrunkNames('No trunk here; the trunk 65f0c0ff0 is unknown.', others)).toBe('No trunk here; the trunk 65f0c0ff0 is unknown.');
  });
});
