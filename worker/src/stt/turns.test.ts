import type { BotPolicy } from '@voice-platform/schemas';
import { completeUtterance, interrupts, isBackchannel, turnWords } from './turns.js';

const policy: BotPolicy = {
  intents: [
    { name: 'pay', examples: ['i will pay on friday', 'i will pay'], reply: 'Friday it is.' },
    { name: 'amount', examples: ['how much'], reply: 'Forty dollars.' },
    { name: 'repeat', examples: ['Repeat that.'], reply: 'Forty dollars.' },
  ],
  fallback: { reply: 'Sorry?' },
};

describe('what the words of a turn say about it', () => {
  it('spells acknowledgements as one word each', () => {
    expect(turnWords('Uh huh, mm-hmm. OK!')).toEqual(['uh-huh', 'mm-hmm', 'ok']);
  });

  it('a scripted bot: complete once an example phrase is heard whole, not on a fragment of one', () => {
    expect(completeUtterance(policy, 'i will')).toBe(false);
    expect(completeUtterance(policy, 'i will pay')).toBe(true);
    expect(completeUtterance(policy, 'I will pay on Friday.')).toBe(true);
    expect(completeUtterance(policy, 'how much')).toBe(true);
    // A phrase of the policy word for word, though its last word often leaves a sentence open.
    expect(completeUtterance(policy, 'repeat that')).toBe(true);
    expect(completeUtterance(policy, 'please repeat that')).toBe(false);
    // An example inside a sentence that is still going on is not the end.
    expect(completeUtterance(policy, 'i will pay on')).toBe(false);
    // Off the policy: the turn waits for the end-of-turn silence (the fallback answers then).
    expect(completeUtterance(policy, 'what is the weather')).toBe(false);
    expect(completeUtterance(policy, '')).toBe(false);
  });

  it('a bot without a policy: complete unless the last word leaves the sentence open', () => {
    expect(completeUtterance(null, 'I would like to pay on Friday')).toBe(true);
    for (const open of ['I would like to pay and', 'I want to talk to', 'it is um', 'can I speak with the', 'I will']) expect(completeUtterance(null, open)).toBe(false);
  });

  it('backchannels: acknowledgements only, fewer than min_words; anything else interrupts', () => {
    expect(isBackchannel('uh-huh', 2)).toBe(true);
    expect(isBackchannel('yeah', 2)).toBe(true);
    expect(isBackchannel('uh huh', 2)).toBe(true);
    expect(isBackchannel('okay okay', 2)).toBe(false);
    expect(isBackchannel('okay okay', 3)).toBe(true);
    expect(isBackchannel('', 2)).toBe(false);
    expect(interrupts('wait', 2)).toBe(true);
    expect(interrupts('wait stop', 2)).toBe(true);
    expect(interrupts('yeah', 2)).toBe(false);
    expect(interrupts('yeah right', 2)).toBe(true);
    expect(interrupts('', 2)).toBe(false);
  });
});
