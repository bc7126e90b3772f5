import { actorLabel, auditQuery, changeRows, changeValue, clip, EMPTY_AUDIT_FILTERS } from './audit.js';

describe('auditQuery', () => {
  it('leaves out empty filters', () => {
    expect(auditQuery(EMPTY_AUDIT_FILTERS)).toEqual({ filters: {} });
  });

  it('sends actor, resource type, the trimmed action and days as instants (the last day included)', () => {
    const r = auditQuery({ actor_id: 'u1', resource_type: 'bot', action: ' bot.update ', fromDate: '2026-11-20', toDate: '2026-11-21' });
    expect(r).toEqual({
      filters: { actor_id: 'u1', resource_type: 'bot', action: 'bot.update', from: new Date(2026, 10, 20).toISOString(), to: new Date(2026, 10, 22).toISOString() },
    });
  });

  it('refuses reversed days, an impossible date and an action the API would refuse', () => {
    expect(auditQuery({ ...EMPTY_AUDIT_FILTERS, fromDate: '2026-11-22', toDate: '2026-11-21' })).toEqual({ error: 'The first day must not be after the last.' });
    expect(auditQuery({ ...EMPTY_AUDIT_FILTERS, fromDate: '2026-02-30' })).toEqual({ error: 'Enter a valid date.' });
    expect(auditQuery({ ...EMPTY_AUDIT_FILTERS, action: 'bot update' })).toEqual({ error: 'An action reads like bot.update.' });
  });
});

describe('changes in words', () => {
  it('field: before → after, null as (none), strings as they are, the rest as JSON', () => {
    expect(changeRows({ name: ['Old', 'New'], active: [true, false], scopes: [null, ['dialout']], secret: ['[redacted]', '[redacted]'] })).toEqual([
      ['name', 'Old', 'New'],
      ['active', 'true', 'false'],
      ['scopes', '(none)', '["dialout"]'],
      ['secret', '[redacted]', '[redacted]'],
    ]);
    expect(changeValue('')).toBe('""');
    expect(changeValue({ a: 1 })).toBe('{"a":1}');
  });

  it('clips long values', () => {
    expect(clip('x'.repeat(10), 5)).toBe('xxxx…');
    expect(clip('short', 5)).toBe('short');
  });

  it('names the actor', () => {
    expect(actorLabel({ type: 'user', id: 'u1', label: 'ana@example.com' })).toBe('ana@example.com');
    expect(actorLabel({ type: 'api_key', id: 'k1', label: 'CRM (vp_ab12)' })).toBe('CRM (vp_ab12) (API key)');
    expect(actorLabel({ type: 'system', id: null, label: '' })).toBe('System');
  });
});
