import type { CallTurn } from '@voice-platform/schemas/calls.js';
import { turnParts, turnSummary, waterfall } from './callTurns.js';

const at = (ms: number) => new Date(Date.UTC(2026, 10, 29, 10, 0, 0) + ms).toISOString();
const turn = (over: Partial<CallTurn> = {}): CallTurn => ({
  index: 1,
  user_text: 'how much',
  user_end_at: at(1000),
  decided_at: at(1700),
  stt_ms: 5,
  llm_first_token_ms: 15,
  tts_first_audio_ms: 60,
  tool_ms: 0,
  latency_ms: 790,
  preemptive: false,
  interrupted: false,
  ...over,
});

describe('call turns as a waterfall', () => {
  it("splits a turn into the wait for its end, its stages and what is left, summing to its latency", () => {
    expect(turnParts(turn())).toEqual([
      { key: 'wait', ms: 700 },
      { key: 'words', ms: 5 },
      { key: 'model', ms: 15 },
      { key: 'tools', ms: 0 },
      { key: 'voice', ms: 60 },
      { key: 'other', ms: 10 },
    ]);
    expect(turnSummary(turn())).toBe('End of turn 700 ms, Words 5 ms, Model 15 ms, Voice 60 ms, Other 10 ms; 790 ms in all');
  });

  it('draws every turn on the scale of the slowest, one segment after the other, leaving out parts of 0 ms', () => {
    const [slow, fast] = waterfall([turn({ latency_ms: 1000, decided_at: at(1700), stt_ms: 100, llm_first_token_ms: 100, tts_first_audio_ms: 100 }), turn({ index: 2, decided_at: at(1250), stt_ms: 0, llm_first_token_ms: 0, tts_first_audio_ms: 0, latency_ms: 260, preemptive: true })]);
    expect(slow!.map((s) => [s.key, s.leftPct, s.widthPct])).toEqual([
      ['wait', 0, 70],
      ['words', 70, 10],
      ['model', 80, 10],
      ['voice', 90, 10],
    ]);
    expect(fast!.map((s) => [s.key, s.leftPct, s.widthPct])).toEqual([
      ['wait', 0, 25],
      ['other', 25, 1],
    ]);
  });

  it('never draws a negative part when the clocks disagree by a millisecond', () => {
    const parts = turnParts(turn({ latency_ms: 779 }));
    expect(parts.every((p) => p.ms >= 0)).toBe(true);
    expect(parts.find((p) => p.key === 'other')!.ms).toBe(0);
  });
});
