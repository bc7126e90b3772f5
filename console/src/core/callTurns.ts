// A call's turns as the worker timed them (GET /calls/{id} `turns`, docs/design.md §16), as a waterfall: the
// wait for the turn's end, then each stage of the reply's critical path, then what the platform added.
import type { CallTurn } from '@voice-platform/schemas/calls.js';

export type SegmentKey = 'wait' | 'words' | 'model' | 'tools' | 'voice' | 'other';

export interface Segment {
  key: SegmentKey;
  label: string;
  ms: number;
  /** Where it starts and how wide it is, % of the widest turn's latency (all turns on one scale). */
  leftPct: number;
  widthPct: number;
}

export const SEGMENT_LABELS: Record<SegmentKey, string> = {
  wait: 'End of turn',
  words: 'Words',
  model: 'Model',
  tools: 'Tools',
  voice: 'Voice',
  other: 'Other',
};

/** The turn's parts in order, their ms summing to its latency (the rest, if any, is `other`). */
export function turnParts(t: CallTurn): Array<{ key: SegmentKey; ms: number }> {
  const wait = Math.max(0, Date.parse(t.decided_at) - Date.parse(t.user_end_at));
  const parts: Array<{ key: SegmentKey; ms: number }> = [
    { key: 'wait', ms: wait },
    { key: 'words', ms: t.stt_ms },
    { key: 'model', ms: t.llm_first_token_ms },
    { key: 'tools', ms: t.tool_ms },
    { key: 'voice', ms: t.tts_first_audio_ms },
  ];
  const rest = t.latency_ms - parts.reduce((n, p) => n + p.ms, 0);
  parts.push({ key: 'other', ms: Math.max(0, rest) });
  return parts;
}

/** Each turn's segments on one scale: the widest latency is 100 %. Parts of 0 ms are left out. */
export function waterfall(turns: readonly CallTurn[]): Segment[][] {
  const scale = Math.max(1, ...turns.map((t) => Math.max(t.latency_ms, turnParts(t).reduce((n, p) => n + p.ms, 0))));
  return turns.map((t) => {
    let at = 0;
    const out: Segment[] = [];
    for (const p of turnParts(t)) {
      if (p.ms > 0) out.push({ key: p.key, label: SEGMENT_LABELS[p.key], ms: p.ms, leftPct: (100 * at) / scale, widthPct: (100 * p.ms) / scale });
      at += p.ms;
    }
    return out;
  });
}

/** The turn in words, for a screen reader and a tooltip: "End of turn 700 ms, Words 4 ms, …; 770 ms in all". */
export function turnSummary(t: CallTurn): string {
  const parts = turnParts(t)
    .filter((p) => p.ms > 0)
    .map((p) => `${SEGMENT_LABELS[p.key]} ${p.ms} ms`);
  return `${parts.join(', ')}; ${t.latency_ms} ms in all`;
}
