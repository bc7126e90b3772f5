import { timeline } from './callTimeline.js';

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
