import { actionDetail, callEvents, timeline } from './callTimeline.js';

describe('timeline', () => {
  it('lists reached statuses in lifecycle order and nothing ahead of a terminal one', () => {
    const t = timeline({ status: 'failed', status_times: { failed: '2025-01-01T00:00:02.000Z', queued: '2025-01-01T00:00:00.000Z', dialing: '2025-01-01T00:00:01.000Z' } });
    expect(t).toEqual([
      { status: 'queued', at: '2025-01-01T00:00:00.000Z' },
      { status: 'dialing', at: '2025-01-01T00:00:01.000Z' },
      { status: 'failed', at: '2025-01-01T00:00:02.000Z' },
    ]);
  });

  it('shows the steps still ahead of a live call', () => {
    const t = timeline({ status: 'ringing', status_times: { queued: '2025-01-01T00:00:00.000Z', ringing: '2025-01-01T00:00:03.000Z' } });
    expect(t.map((s) => [s.status, s.at !== null])).toEqual([
      ['queued', true],
      ['ringing', true],
      ['in_progress', false],
      ['completed', false],
    ]);
  });
});

describe('callEvents', () => {
  const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
  it('orders statuses, turns, actions and the transfer by time; the start first and the end last at a tie', () => {
    const events = callEvents({
      status_times: { completed: at(9), in_progress: at(1), queued: at(0) },
      transcript: [
        { role: 'bot', text: 'Hello', at: at(1) },
        { role: 'user', text: 'I will pay', at: at(3) },
        { role: 'bot', text: 'Goodbye', at: at(9) },
      ],
      actions: [
        { type: 'transfer', name: 'to_agent', at: at(8), duration_ms: 900, status: 'ok' },
        { type: 'tool', name: 'record_promise', at: at(4), duration_ms: 120, status: 'ok', arguments: { amount: 40 }, result: '{"ref":"P-1"}' },
      ],
      transfer: { mode: 'cold', target: 'tel:+4915112345678', status: 'accepted', sip_status_code: 202, at: at(8) },
    });
    expect(events.map((e) => [e.kind, e.kind === 'status' ? e.status : e.kind === 'turn' ? e.turn.text : e.kind === 'action' ? e.action.name : e.transfer.target, e.at])).toEqual([
      ['status', 'queued', at(0)],
      ['status', 'in_progress', at(1)],
      ['turn', 'Hello', at(1)],
      ['turn', 'I will pay', at(3)],
      ['action', 'record_promise', at(4)],
      ['action', 'to_agent', at(8)],
      ['transfer', 'tel:+4915112345678', at(8)],
      ['turn', 'Goodbye', at(9)],
      ['status', 'completed', at(9)],
    ]);
  });

  it('reads a record from before actions existed', () => {
    expect(callEvents({ status_times: { queued: at(0) }, transcript: [] })).toEqual([{ kind: 'status', at: at(0), status: 'queued' }]);
  });

  it('shows arguments and results as one short line', () => {
    expect(actionDetail({ a: 1 })).toBe('{"a":1}');
    expect(actionDetail(null)).toBe('');
    expect(actionDetail('x'.repeat(300))).toBe(`${'x'.repeat(199)}…`);
  });
});
