// Slots' accounting of test calls against dial-outs (TEST_CALL_SHARE): the counts must be exact.
import { Slots } from './capacity.js';

describe('Slots: the test calls share', () => {
  it('lets test calls take floor(max × share) slots and dial-outs every free slot', () => {
    const slots = new Slots(4, undefined, 0.5);
    expect(slots.testMax).toBe(2);
    expect(slots.tryAcquire('t1', 'test')).toBe('ok');
    expect(slots.tryAcquire('t2', 'test')).toBe('ok');
    expect(slots.tryAcquire('t3', 'test')).toBe('test_share_full');
    expect([slots.active, slots.testActive, slots.free]).toEqual([2, 2, 2]);
    expect(slots.tryAcquire('d1')).toBe('ok');
    expect(slots.tryAcquire('d2', 'dialout')).toBe('ok');
    expect(slots.tryAcquire('d3')).toBe('worker_at_capacity');
    // A test call's slot back makes room for one test call; a dial-out's does not widen the share.
    slots.release('d1');
    expect(slots.tryAcquire('t3', 'test')).toBe('test_share_full');
    slots.release('t1');
    expect(slots.tryAcquire('t3', 'test')).toBe('ok');
    expect([slots.active, slots.testActive]).toEqual([3, 2]);
  });

  it('keeps at least one test slot when share > 0, none at share 0, and all at share 1', () => {
    expect(new Slots(1, undefined, 0.5).testMax).toBe(1);
    expect(new Slots(3, undefined, 0.1).testMax).toBe(1);
    expect(new Slots(30, undefined, 0.5).testMax).toBe(15);
    expect(new Slots(30, undefined, 1).testMax).toBe(30);
    const none = new Slots(4, undefined, 0);
    expect(none.tryAcquire('t', 'test')).toBe('test_share_full');
    expect(none.tryAcquire('d')).toBe('ok');
  });

  it('counts a claimed job that turns out to be a browser call against the share (markTest)', () => {
    const slots = new Slots(4, undefined, 0.5);
    for (const id of ['w1', 'w2', 'w3']) expect(slots.tryAcquire(id)).toBe('ok');
    expect(slots.markTest('w1')).toBe(true);
    expect(slots.markTest('w1')).toBe(true);
    expect(slots.markTest('w2')).toBe(true);
    // Beyond the share: refused, and the slot stays a plain one the claim loop gives back.
    expect(slots.markTest('w3')).toBe(false);
    expect(slots.testActive).toBe(2);
    slots.release('w3');
    expect([slots.active, slots.testActive]).toEqual([2, 2]);
    expect(slots.markTest('not-held')).toBe(false);
  });

  it('refuses everything while draining', () => {
    const slots = new Slots(4, undefined, 0.5);
    slots.draining = true;
    expect(slots.tryAcquire('t', 'test')).toBe('worker_draining');
    expect(slots.tryAcquire('d')).toBe('worker_draining');
  });
});
