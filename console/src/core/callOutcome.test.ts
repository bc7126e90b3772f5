// How a call's outcome reads: who answered it, how long detecting that took, and end reasons in words.
import { ANSWERED_BY } from '@voice-platform/schemas/calls.js';
import { amdDuration, ANSWERED_BY_LABELS, answeredByLabel, endReasonLabel } from './callOutcome.js';

describe('call outcome', () => {
  it('names who answered, and a dash where nothing listened', () => {
    expect(ANSWERED_BY.map(answeredByLabel)).toEqual(['Human', 'Machine', 'Fax', 'Unknown']);
    expect(Object.keys(ANSWERED_BY_LABELS).sort()).toEqual([...ANSWERED_BY].sort());
    expect(answeredByLabel(null)).toBe('—');
    expect(answeredByLabel(undefined)).toBe('—'); // a call from an older backend
  });

  it('gives the detection time in ms below a second, in seconds from it', () => {
    expect(amdDuration(0)).toBe('0 ms');
    expect(amdDuration(850)).toBe('850 ms');
    expect(amdDuration(1000)).toBe('1.0 s');
    expect(amdDuration(2437)).toBe('2.4 s');
    expect(amdDuration(null)).toBe('—');
  });

  it('puts the answering machine end reasons in words and leaves the others as the API names them', () => {
    expect(endReasonLabel('voicemail')).toBe('Voicemail (hung up)');
    expect(endReasonLabel('voicemail_left')).toBe('Message left on voicemail');
    expect(endReasonLabel('fax')).toBe('Fax machine');
    expect(endReasonLabel('bot_hangup')).toBe('bot_hangup');
    expect(endReasonLabel('toString')).toBe('toString');
    expect(endReasonLabel(null)).toBe('—');
    expect(endReasonLabel('')).toBe('—');
  });
});
