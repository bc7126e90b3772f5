import { CallJobError, decodeCallJob, encodeCallJob, type CallJobData } from './job.js';

describe('call job wire format', () => {
  it('round-trips every field of each kind of job', () => {
    const jobs: CallJobData[] = [
      { call_id: 'c1', bot_id: 'b1', variables: { name: 'Ada', 'π': 'ü' }, direction: 'outbound', to_number: '+4915112345678', sip_trunk_id: 'ST_1', from_number: '+4930123456' },
      { call_id: 'c2', bot_id: 'b2', variables: {}, direction: 'web' },
      { call_id: 'c3', bot_id: 'b3', variables: { a: '' }, direction: 'inbound', room_name: 'in-x', from_number: '' },
      { call_id: 'c4', bot_id: 'b4', variables: {}, direction: 'outbound', to_number: '+1', sip_trunk_id: 't', from_number: '+2', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    ];
    for (const job of jobs) expect(decodeCallJob(encodeCallJob(job))).toEqual(job);
  });

  it('writes a dial-out without a direction field, as workers have always read it', () => {
    const fields = encodeCallJob({ call_id: 'c', bot_id: 'b', variables: {}, direction: 'outbound', to_number: '+1', sip_trunk_id: 't', from_number: '+2' });
    expect(fields).not.toContain('direction');
    expect(fields.slice(0, 6)).toEqual(['call_id', 'c', 'bot_id', 'b', 'variables', '{}']);
  });

  it.each([
    [['call_id', 'c', 'bot_id'], /pairs/],
    [['bot_id', 'b', 'variables', '{}'], /call_id/],
    [['call_id', 'c', 'bot_id', 'b'], /variables/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '{nope'], /not JSON/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '[1]'], /string → string/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '{"n":1}'], /string → string/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '{}', 'direction', 'sideways'], /direction/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '{}', 'colour', 'red'], /not a call job/],
    [['call_id', '', 'bot_id', 'b', 'variables', '{}'], /call_id and bot_id/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '{}', 'traceparent', 'nope'], /traceparent/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '{}', 'traceparent', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'], /traceparent/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '{}', 'traceparent', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'], /traceparent/],
    [['call_id', 'c', 'bot_id', 'b', 'variables', '{}', 'traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'], /traceparent/],
  ])('rejects %j', (fields, message) => {
    expect(() => decodeCallJob(fields)).toThrow(CallJobError);
    expect(() => decodeCallJob(fields)).toThrow(message);
  });
});
