// The test phone takes transfers and plays the warm-transfer agent (docs/design.md §9), against the real
// livekit-server, livekit-sip and sipp, driven through livekit-server-sdk as the worker drives them:
// every answering number accepts a REFER (202, a NOTIFY saying `SIP/2.0 200 OK`, then its own BYE) and
// logs it; +15005554603 answers 603 and stays on; the agent (+15005553000) answers, hears the room at
// the ear and talks into it; +15005553486 is busy.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AudioFrame, AudioSource, AudioStream, dispose, LocalAudioTrack, Room, RoomEvent, TrackPublishOptions, TrackSource, type RemoteParticipant, type RemoteTrack } from '@livekit/rtc-node';
import { SIPTransport } from '@livekit/protocol';
import { AccessToken, RoomServiceClient, SipCallError, SipClient } from 'livekit-server-sdk';
import { PhoneEar } from './ear.js';
import { startTestEnv, type TestEnv } from './env.js';
import { waitUntil } from './process.js';
import { answeringNumber, holdNumber, keypadNumber, listenNumber, PHONE_NUMBERS, type Phone } from './telephony.js';

let env: TestEnv;
let phone: Phone;
let sip: SipClient;
let rooms: RoomServiceClient;
let trunkId: string;

beforeAll(async () => {
  env = await startTestEnv(['livekit', 'phone']);
  phone = env.services.phone as Phone;
  const http = env.env.LIVEKIT_URL!.replace(/^ws/, 'http');
  sip = new SipClient(http, env.env.LIVEKIT_API_KEY!, env.env.LIVEKIT_API_SECRET!);
  rooms = new RoomServiceClient(http, env.env.LIVEKIT_API_KEY!, env.env.LIVEKIT_API_SECRET!);
  const trunk = await sip.createSipOutboundTrunk('test phone', env.env.SIP_PHONE_ADDRESS!, ['+15550001111'], { transport: SIPTransport.SIP_TRANSPORT_UDP });
  trunkId = trunk.sipTrunkId;
}, 120_000);
afterAll(async () => {
  // rtc-node's native client keeps the process alive until it is disposed.
  await dispose();
  await env?.stop();
});

const roomName = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;
/** A number the phone answers and talks on, unique per call so its SIP messages can be told apart. */
const answering = answeringNumber;
const call = (number: string, room: string, identity = 'callee') => sip.createSipParticipant(trunkId, number, room, { participantIdentity: identity, waitUntilAnswered: true });
const failure = (p: Promise<unknown>) => p.then(() => { throw new Error('resolved'); }, (err: unknown) => err);

/**
 * How long a callee whose call ended may stay in the room: livekit-sip sometimes closes its signalling
 * before its leave reaches livekit-server (a few percent of the calls here: "error writing to websocket:
 * broken pipe"), which then drops the participant once ICE fails, 15 s later (rtc/transport.go).
 */
const LEAVE_MS = 20_000;

async function identities(room: string): Promise<string[]> {
  try {
    return (await rooms.listParticipants(room)).map((p) => p.identity);
  } catch {
    return []; // the room is gone with its last participant
  }
}

/**
 * The phone's latest call to `number`, from its message trace: the SIP Call-ID and each message as
 * `> REFER (2 REFER)` (received) or `< SIP/2.0 202 (2 REFER)` (sent).
 */
function phoneDialog(number: string): { callId: string; messages: string[] } {
  const blocks = readFileSync(phone.messageLog, 'utf8').split(/^-{5,}.*$/m).filter((b) => /message (received|sent)/.test(b));
  const invite = blocks.filter((b) => new RegExp(`^INVITE sip:\\${number}@`, 'm').test(b)).pop();
  const callId = invite?.match(/^Call-ID:\s*(\S+)/im)?.[1] ?? '';
  const messages = blocks
    .filter((b) => callId && b.includes(`Call-ID: ${callId}`))
    .map((b) => {
      const first = b.split('\n').map((l) => l.trim()).find((l) => /^[A-Z]+ sip:|^SIP\/2\.0 \d/.test(l)) ?? '?';
      const what = first.startsWith('SIP/2.0') ? first.split(' ').slice(0, 2).join(' ') : first.split(' ')[0];
      return `${/message received/.test(b) ? '>' : '<'} ${what} (${b.match(/^CSeq:\s*(.+?)\s*$/im)?.[1]})`;
    });
  return { callId, messages };
}

/** Joins `room` as `identity`, auto-subscribing. */
async function joinRoom(room: string, identity: string): Promise<Room> {
  const at = new AccessToken(env.env.LIVEKIT_API_KEY!, env.env.LIVEKIT_API_SECRET!, { identity, ttl: '10m' });
  at.addGrant({ room, roomJoin: true, canPublish: true, canSubscribe: true });
  const r = new Room();
  await r.connect(env.env.LIVEKIT_URL!, await at.toJwt(), { autoSubscribe: true, dynacast: false });
  return r;
}

/** Whole cycles in a 20 ms frame: frame after frame, one unbroken tone. */
const TONE_HZ = 400;
/** 20 ms of the tone at 16 kHz (amplitude 8000). */
const TONE_20MS = new Int16Array(320).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * TONE_HZ * i) / 16000)));

/** The share of `pcm`'s energy at `hz` (Goertzel): near 1 for a pure tone at that frequency. */
function toneShare(pcm: Int16Array, rate: number, hz: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / rate);
  let [s1, s2, total] = [0, 0, 0];
  for (const x of pcm) {
    const s = x + k * s1 - s2;
    [s2, s1] = [s1, s];
    total += x * x;
  }
  const power = s1 * s1 + s2 * s2 - k * s1 * s2;
  return total ? (2 * power) / (pcm.length * total) : 0;
}

/** Reads `stream` until it carried `ms` of loud audio (a frame above `threshold` counts), then stops. */
async function hearLoud(stream: AudioStream, ms: number, threshold = 2000): Promise<void> {
  const reader = stream.getReader();
  let loudMs = 0;
  while (loudMs < ms) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended');
    if (value.data.some((x) => Math.abs(x) > threshold)) loudMs += (value.samplesPerChannel / value.sampleRate) * 1000;
  }
  reader.releaseLock();
  await stream.cancel();
}

describe('a transfer (REFER) to the test phone', () => {
  it('an answering number accepts it: the transfer resolves, the phone logs it once and hangs up its call itself', async () => {
    const room = roomName('transfer');
    const number = answering();
    await call(number, room);
    expect(await identities(room)).toEqual(['callee']);

    await sip.transferSipParticipant(room, 'callee', `tel:${PHONE_NUMBERS.agent}`);
    const { callId } = phoneDialog(number);
    expect(callId).not.toBe('');
    await waitUntil(() => phone.refers().length > 0, { what: 'the REFER in refer.log', timeoutMs: 5000 });
    expect(phone.refers()).toEqual([{ callId, referTo: `tel:${PHONE_NUMBERS.agent}` }]);
    await waitUntil(async () => !(await identities(room)).includes('callee'), { what: 'the callee leaving the room', timeoutMs: LEAVE_MS });
    // What a real transferee does: 202, the NOTIFY with the new call's outcome, then its own BYE (the
    // phone's, CSeq 2 after its NOTIFY; livekit-sip would send one a second after the NOTIFY otherwise).
    await waitUntil(() => phoneDialog(number).messages.length >= 10, { what: 'the 200 to the phone\'s BYE', timeoutMs: 5000 });
    expect(phoneDialog(number).messages).toEqual([
      '> INVITE (1 INVITE)',
      '< SIP/2.0 180 (1 INVITE)',
      '< SIP/2.0 200 (1 INVITE)',
      '> ACK (1 ACK)',
      '> REFER (2 REFER)',
      '< SIP/2.0 202 (2 REFER)',
      '< NOTIFY (1 NOTIFY)',
      '> SIP/2.0 200 (1 NOTIFY)',
      '< BYE (2 BYE)',
      '> SIP/2.0 200 (2 BYE)',
    ]);
    expect(readFileSync(phone.referLog, 'utf8')).toBe(`${callId} tel:${PHONE_NUMBERS.agent}\n`);
  });

  // The other answering numbers wait in a pause or for their hang-up time when the REFER comes.
  it.each([
    ['a holding number', holdNumber(30)],
    ['a listening number', listenNumber(30)],
    ['a keypad number', keypadNumber('12')],
    ['the interrupting number', PHONE_NUMBERS.interrupts],
    ['the agent', PHONE_NUMBERS.agent],
  ])('%s accepts it too, a sip: target as well', async (_what, number) => {
    const room = roomName('transfer');
    await call(number, room);
    await sip.transferSipParticipant(room, 'callee', `sip:${PHONE_NUMBERS.answers}@127.0.0.1`);
    const { callId } = phoneDialog(number);
    await waitUntil(() => phone.refers().some((r) => r.callId === callId), { what: 'the REFER in refer.log', timeoutMs: 5000 });
    // livekit-server hands a sip: target on as a name-addr.
    expect(phone.refers().filter((r) => r.callId === callId)).toEqual([{ callId, referTo: `<sip:${PHONE_NUMBERS.answers}@127.0.0.1>` }]);
    await waitUntil(async () => !(await identities(room)).includes('callee'), { what: 'the callee leaving the room', timeoutMs: LEAVE_MS });
    await waitUntil(() => phoneDialog(number).messages.includes('> SIP/2.0 200 (2 BYE)'), { what: 'the 200 to the phone\'s BYE', timeoutMs: 5000 });
  });

  it('+15005554603 refuses it with 603 Decline and stays on the call', async () => {
    const room = roomName('refused');
    await call(PHONE_NUMBERS.refusesTransfer, room);
    const err = await failure(sip.transferSipParticipant(room, 'callee', `tel:${PHONE_NUMBERS.agent}`));
    // The shape the worker reads: livekit-server-sdk's SipCallError, its Twirp code from livekit-sip's
    // psrpc error (a 6xx: UpstreamClientError → permission_denied), the SIP status in its metadata.
    expect(err).toBeInstanceOf(SipCallError);
    expect(err).toMatchObject({
      name: 'SipCallError',
      status: 403,
      code: 'permission_denied',
      message: 'SIP call failed: 603 Decline (permission_denied)',
      metadata: { sip_status_code: '603', sip_status: 'Decline' },
    });
    expect([(err as SipCallError).sipStatusCode, (err as SipCallError).sipStatus]).toEqual([603, 'Decline']);

    // The phone's trace and its refer.log (a shell sipp forks) may lag behind the 603 it sent.
    const { callId } = phoneDialog(PHONE_NUMBERS.refusesTransfer);
    await waitUntil(() => phone.refers().some((r) => r.callId === callId), { what: 'the REFER in refer.log', timeoutMs: 5000 });
    expect(phone.refers().filter((r) => r.callId === callId)).toEqual([{ callId, referTo: `tel:${PHONE_NUMBERS.agent}` }]);
    await waitUntil(() => phoneDialog(PHONE_NUMBERS.refusesTransfer).messages.length >= 6, { what: 'the 603 in the phone\'s trace', timeoutMs: 5000 });
    expect(phoneDialog(PHONE_NUMBERS.refusesTransfer).messages).toEqual(['> INVITE (1 INVITE)', '< SIP/2.0 180 (1 INVITE)', '< SIP/2.0 200 (1 INVITE)', '> ACK (1 ACK)', '> REFER (2 REFER)', '< SIP/2.0 603 (2 REFER)']);
    // Still on: in the room, the call active, past the second after which livekit-sip hangs up an accepted transfer.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const [callee] = await rooms.listParticipants(room);
    expect(callee).toMatchObject({ identity: 'callee', attributes: expect.objectContaining({ 'sip.callStatus': 'active' }) });
    expect(phoneDialog(PHONE_NUMBERS.refusesTransfer).messages).toHaveLength(6);

    // Hanging up ourselves: the phone answers the BYE.
    await rooms.removeParticipant(room, 'callee');
    await waitUntil(() => phoneDialog(PHONE_NUMBERS.refusesTransfer).messages.includes('< SIP/2.0 200 (3 BYE)'), { what: 'the phone answering the BYE', timeoutMs: 5000 });
  });
});

describe('the warm-transfer agent', () => {
  it('+15005553000 answers, hears the room at the ear, and its "Hello, this is Sam." reaches the room', async () => {
    const room = roomName('agent');
    const ear = await PhoneEar.open(Number(env.env.SIP_PHONE_EAR_PORT));
    // In the room before the agent: hears the agent's track from its first packet, and plays a tone
    // into the room, which livekit-sip mixes into the agent's line.
    const listener = await joinRoom(room, 'listener');
    const source = new AudioSource(16000, 1);
    let playing = true;
    let tone: Promise<void> = Promise.resolve();
    try {
      const agentTrack = new Promise<RemoteTrack>((resolve) =>
        listener.on(RoomEvent.TrackSubscribed, (track: RemoteTrack, _pub: unknown, p: RemoteParticipant) => p.identity === 'agent' && resolve(track)),
      );
      await listener.localParticipant!.publishTrack(LocalAudioTrack.createAudioTrack('tone', source), new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
      // The source's queue paces the frames at real time: no gaps, no timer.
      tone = (async () => {
        while (playing) await source.captureFrame(new AudioFrame(TONE_20MS.slice(), 16000, 1, 320));
      })().catch(() => undefined);

      const info = await call(PHONE_NUMBERS.agent, room, 'agent');
      expect(info).toMatchObject({ participantIdentity: 'agent', roomName: room });

      // Its words reach the room: half a second of speech (the phrase is about 1.2 s, a second after the answer).
      await hearLoud(new AudioStream(await agentTrack, { sampleRate: 16000, numChannels: 1, frameSizeMs: 20 }), 500);
      // The room reaches its ear: the tone, as 8 kHz G.711 from livekit-sip.
      await waitUntil(
        () => ear.heard().some((s) => s.pcm.length >= 8000 && toneShare(s.pcm.subarray(s.pcm.length - 4000), 8000, TONE_HZ) > 0.8),
        { what: `the ${TONE_HZ} Hz tone at the agent's ear`, timeoutMs: 10_000 },
      );
      expect(ear.heard()).toHaveLength(1);

      // The call ends early on our BYE; the agent answers it.
      await rooms.removeParticipant(room, 'agent');
      await waitUntil(() => phoneDialog(PHONE_NUMBERS.agent).messages.some((m) => /^< SIP\/2\.0 200 \(\d+ BYE\)$/.test(m)), { what: 'the agent answering the BYE', timeoutMs: 5000 });
      expect(phoneDialog(PHONE_NUMBERS.agent).messages.filter((m) => !m.includes('INVITE') && !m.includes('ACK'))).toEqual([
        expect.stringMatching(/^> BYE \(\d+ BYE\)$/),
        expect.stringMatching(/^< SIP\/2\.0 200 \(\d+ BYE\)$/),
      ]);
    } finally {
      playing = false;
      await tone;
      await source.close();
      await listener.disconnect();
      await ear.close();
    }
  });

  it('+15005553486 is busy: 486 Busy Here', async () => {
    const err = await failure(call(PHONE_NUMBERS.agentBusy, roomName('busy'), 'agent'));
    expect(err).toBeInstanceOf(SipCallError);
    expect(err).toMatchObject({
      name: 'SipCallError',
      status: 429,
      code: 'resource_exhausted',
      message: 'SIP call failed: 486 Busy Here (resource_exhausted)',
      metadata: { sip_status_code: '486', sip_status: 'Busy Here' },
    });
    expect((err as SipCallError).sipStatusCode).toBe(486);
    await waitUntil(() => phoneDialog(PHONE_NUMBERS.agentBusy).messages.length >= 3, { what: 'the ACK in the phone\'s trace', timeoutMs: 5000 });
    expect(phoneDialog(PHONE_NUMBERS.agentBusy).messages).toEqual(['> INVITE (1 INVITE)', '< SIP/2.0 486 (1 INVITE)', '> ACK (1 ACK)']);
  });
});
