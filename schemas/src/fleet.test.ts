import { streamEntries } from './fleet.js';

describe('streamEntries', () => {
  const entries = [
    ['1-0', ['call_id', 'c1']],
    ['2-0', null],
  ];
  it('reads the RESP2 reply [[stream, entries]]', () => {
    expect(streamEntries([['vp:jobs:calls', entries]])).toEqual(entries);
  });
  it('reads the RESP3 map ioredis 6 flattens to [stream, entries]', () => {
    expect(streamEntries(['vp:jobs:calls', entries])).toEqual(entries);
  });
  it('reads null (BLOCK ran out) and shapes it does not know as no entries', () => {
    expect(streamEntries(null)).toEqual([]);
    expect(streamEntries([])).toEqual([]);
    expect(streamEntries(['vp:jobs:calls'])).toEqual([]);
    expect(streamEntries('OK')).toEqual([]);
  });
});
