// The call page's post-call analysis in words.
import { ANALYSIS_STATUSES, TERMINAL_CALL_STATUSES, type CallAnalysis } from '@voice-platform/schemas/calls.js';
import { ANALYSIS_STATUS_LABELS, analysisRows, analysisValue, stillMoving, successLabel } from './callAnalysis.js';

const done: CallAnalysis = {
  status: 'done',
  summary: 'The caller promised to pay.',
  data: { outcome: 'promised', amount: 40, wants_callback: false, note: null },
  success: true,
  error: null,
  completed_at: '2026-01-01T00:00:00.000Z',
};

describe('post-call analysis on the call page', () => {
  it('names every status', () => {
    expect(Object.keys(ANALYSIS_STATUS_LABELS).sort()).toEqual([...ANALYSIS_STATUSES].sort());
  });

  it('reads each field: text and numbers as they are, booleans as yes/no, a dash where the call did not tell', () => {
    expect(analysisRows(done)).toEqual([
      ['outcome', 'promised'],
      ['amount', '40'],
      ['wants_callback', 'No'],
      ['note', '—'],
    ]);
    expect(analysisValue(true)).toBe('Yes');
    expect(analysisValue(0)).toBe('0');
    expect(analysisRows({ ...done, data: null })).toEqual([]);
  });

  it('says whether the criterion was met', () => {
    expect([true, false, null].map(successLabel)).toEqual(['Met', 'Not met', 'Not judged']);
  });

  it('keeps refreshing an ended call while its analysis is pending', () => {
    expect(stillMoving({ status: 'in_progress', analysis: null }, TERMINAL_CALL_STATUSES)).toBe(true);
    expect(stillMoving({ status: 'completed', analysis: { ...done, status: 'pending' } }, TERMINAL_CALL_STATUSES)).toBe(true);
    expect(stillMoving({ status: 'completed', analysis: done }, TERMINAL_CALL_STATUSES)).toBe(false);
    expect(stillMoving({ status: 'completed', analysis: null }, TERMINAL_CALL_STATUSES)).toBe(false);
  });
});
