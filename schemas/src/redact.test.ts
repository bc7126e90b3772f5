import { isRedactionEntity, luhnValid, REDACTION_ENTITIES, redactionOf, redactText, redactValue } from './redact.js';

const ALL = REDACTION_ENTITIES;

describe('luhnValid', () => {
  it('passes test card numbers and fails one digit off', () => {
    for (const n of ['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '4222222222222', '3530111333300000', '6011000990139424']) expect(luhnValid(n)).toBe(true);
    for (const n of ['4111111111111112', '5555555555554445', '378282246310006', '1234567812345678']) expect(luhnValid(n)).toBe(false);
    expect(luhnValid('')).toBe(false);
    expect(luhnValid('41a1')).toBe(false);
  });
});

describe('redactText: card_number', () => {
  const card = (t: string) => redactText(t, ['card_number']);
  it('masks Luhn-valid 13–19 digit numbers, as one run or in groups', () => {
    expect(card('4111111111111111')).toBe('[card_number]');
    expect(card('my card is 4111 1111 1111 1111, expiry 12/29')).toBe('my card is [card_number], expiry 12/29');
    expect(card('4111-1111-1111-1111')).toBe('[card_number]');
    expect(card('amex 3782 822463 10005 thanks')).toBe('amex [card_number] thanks');
    expect(card('4222222222222')).toBe('[card_number]'); // 13 digits
    expect(card('6011000990139424')).toBe('[card_number]');
  });
  it('leaves Luhn-invalid numbers and numbers of other lengths', () => {
    for (const t of ['4111111111111112', '4111 1111 1111 1112', 'order 123456789012', '12345678901234567890123', 'call 415-555-0100', 'it costs 1500 dollars']) expect(card(t)).toBe(t);
  });
  it('finds a card inside a longer run of numbers, and two cards in one text', () => {
    expect(card('4111111111111111 2029')).toBe('[card_number] 2029');
    expect(card('first 4111111111111111 then 5555 5555 5555 4444.')).toBe('first [card_number] then [card_number].');
  });
  it('masks digits spoken as words', () => {
    expect(card('it is four one one one one one one one one one one one one one one one')).toBe('it is [card_number]');
    expect(card('Four, one, one, one, 1111 1111 1111 okay')).toBe('[card_number] okay');
    expect(card('one two three four')).toBe('one two three four');
  });
  it('is a keypad turn of digits as well, and a bot reply reading it back', () => {
    expect(card('Account 4111111111111111 found.')).toBe('Account [card_number] found.');
  });
});

describe('redactText: ssn', () => {
  const ssn = (t: string) => redactText(t, ['ssn']);
  it('masks ddd-dd-dddd, ddd dd dddd and 9 digits alone', () => {
    expect(ssn('SSN 123-45-6789.')).toBe('SSN [ssn].');
    expect(ssn('it is 123 45 6789')).toBe('it is [ssn]');
    expect(ssn('123456789')).toBe('[ssn]');
  });
  it('leaves numbers that cannot be one, or of another shape', () => {
    for (const t of ['000-12-3456', '666-12-3456', '912-34-5678', '123-00-4567', '123-45-0000', '123-45 6789', '1234-56-789', '12345678', '1234567890', '415-555-0100']) expect(ssn(t)).toBe(t);
  });
});

describe('redactText: email', () => {
  it('masks addresses and nothing around them', () => {
    expect(redactText('write to jane.doe+bills@mail.example.co.uk today', ['email'])).toBe('write to [email] today');
    expect(redactText('a@b.io, c_d@e-f.org', ['email'])).toBe('[email], [email]');
    expect(redactText('at example dot com, user@localhost', ['email'])).toBe('at example dot com, user@localhost');
  });
});

describe('redactText: phone', () => {
  const phone = (t: string) => redactText(t, ['phone']);
  it('masks E.164, international and national formats', () => {
    expect(phone('call +14155550100 now')).toBe('call [phone] now');
    expect(phone('+1 (415) 555-0100')).toBe('[phone]');
    expect(phone('+44 20 7946 0958')).toBe('[phone]');
    expect(phone('(415) 555-0100')).toBe('[phone]');
    expect(phone('415-555-0100 or 415.555.0100 or 415 555 0100')).toBe('[phone] or [phone] or [phone]');
    expect(phone('1-800-555-0100')).toBe('[phone]');
    expect(phone('020 7946 0958')).toBe('[phone]');
    expect(phone('4155550100')).toBe('[phone]');
  });
  it('leaves dates, times, amounts, short numbers and versions', () => {
    for (const t of ['2026-11-29', 'at 10:30', '$1,500.00', 'room 1234', '555-0100', 'version 1.2.3', '+12', 'a 3 hour call']) expect(phone(t)).toBe(t);
  });
});

describe('redactText: several entities', () => {
  it('masks each kind in mixed text and touches nothing else', () => {
    const text = 'Hi, I am Jane (jane@example.com), card 4111 1111 1111 1111, SSN 123-45-6789, call me on +1 415 555 0100. Order #A-1234 on 2026-11-29 for $25.';
    expect(redactText(text, ALL)).toBe('Hi, I am Jane ([email]), card [card_number], SSN [ssn], call me on [phone]. Order #A-1234 on 2026-11-29 for $25.');
  });
  it('masks only the entities asked for', () => {
    const text = 'card 4111111111111111 mail jane@example.com';
    expect(redactText(text, ['email'])).toBe('card 4111111111111111 mail [email]');
    expect(redactText(text, [])).toBe(text);
  });
  it('a card number is a card, not a phone number, with both asked for', () => {
    expect(redactText('5555555555554444', ['phone', 'card_number'])).toBe('[card_number]');
  });
  it('text without any is returned as it was', () => {
    const text = 'I would like to book a table for two at seven, please.';
    expect(redactText(text, ALL)).toBe(text);
  });
});

describe('redactValue', () => {
  it('masks every string (and long integer) of a JSON value, keeps keys and the rest', () => {
    const v = { digits: '4111111111111111', nested: [{ email: 'a@b.io', n: 3, ok: true }], card: 4111111111111111, none: null };
    expect(redactValue(v, ALL)).toEqual({ digits: '[card_number]', nested: [{ email: '[email]', n: 3, ok: true }], card: '[card_number]', none: null });
    expect(redactValue(v, [])).toBe(v);
  });
});

describe('redactionOf', () => {
  it('is no redaction for a bot or config without the setting', () => {
    expect(redactionOf(undefined)).toEqual({ entities: [], redact_llm: false });
    expect(redactionOf({ entities: ['card_number', 'nope'], redact_llm: true })).toEqual({ entities: ['card_number'], redact_llm: true });
    expect(isRedactionEntity('ssn')).toBe(true);
    expect(isRedactionEntity('passport')).toBe(false);
  });
});
