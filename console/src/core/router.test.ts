import { matchRoute, safeNext } from './router.js';

describe('matchRoute', () => {
  it.each([
    ['/login', 'login', {}],
    ['/', 'dashboard', {}],
    ['/api-keys', 'apiKeys', {}],
    ['/bots', 'bots', {}],
    ['/bots/new', 'botNew', {}],
    ['/bots/65f0c0ffee', 'botEdit', { id: '65f0c0ffee' }],
    ['/bots/65f0c0ffee/test-call', 'botTestCall', { id: '65f0c0ffee' }],
    ['/bots/65f0c0ffee/tests', 'botTests', { id: '65f0c0ffee' }],
    ['/calls', 'calls', {}],
    ['/calls/abc123', 'callDetail', { id: 'abc123' }],
    ['/trunks', 'trunks', {}],
    ['/trunks/', 'trunks', {}],
    ['/inbound-numbers', 'inboundNumbers', {}],
    ['/campaigns', 'campaigns', {}],
    ['/campaigns/65f0c0ffee', 'campaignDetail', { id: '65f0c0ffee' }],
    ['/bots/', 'bots', {}],
    ['/calls/a%20b', 'callDetail', { id: 'a b' }],
    ['/nowhere', 'notFound', {}],
    ['/bots/a/b', 'notFound', {}],
  ])('%s → %s', (url, name, params) => {
    const route = matchRoute(url);
    expect(route.name).toBe(name);
    expect(route.params).toEqual(params);
  });

  it('keeps the query string apart from the path', () => {
    const route = matchRoute('/calls?status=failed&bot_id=b1');
    expect(route.name).toBe('calls');
    expect(route.path).toBe('/calls');
    expect(route.query.get('status')).toBe('failed');
    expect(route.query.get('bot_id')).toBe('b1');
  });
});

describe('safeNext', () => {
  it.each([
    ['/calls?status=failed', '/calls?status=failed'],
    ['/bots/abc', '/bots/abc'],
    [null, '/'],
    ['https://evil.example.com/', '/'],
    ['//evil.example.com/', '/'],
    ['/login?next=/x', '/'],
  ])('%s → %s', (next, expected) => {
    expect(safeNext(next)).toBe(expected);
  });
});
