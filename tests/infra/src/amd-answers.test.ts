// The test phone's labelled answers for answering machine detection (docs/design.md §10): the set as data
// (AMD_ANSWERS, docs/amd-answers.md), its audio, and, against the real livekit-server, livekit-sip and
// sipp driven through livekit-server-sdk as the worker drives them: a machine with a beep, one without
// and a person answer and say their line into the room, and a machine records what the room says to it.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AudioFrame, AudioSource, AudioStream, dispose, LocalAudioTrack, Room, RoomEvent, TrackPublishOptions, TrackSource, type RemoteParticipant, type RemoteTrack } from '@livekit/rtc-node';
import { SIPTransport } from '@livekit/protocol';
import { AccessToken, RoomServiceClient, SipClient } from 'livekit-server-sdk';
import { AMD_ANSWERS, amdAnswer, amdAnswersMarkdown, amdAudio, amdPcapName, amdTimeline, humanNumber, linearToUlaw, machineNumber, writeAmdPcaps, type AmdAnswer } from './amdAnswers.js';
import { ulawToLinear } from './ear.js';
import { startTestEnv, type TestEnv } from './env.js';
import { waitUntil } from './process.js';
import { writePhoneFiles, writeRtpPcap, type Phone } from './telephony.js';
import { repoRoot } from './versions.js';
import { readWav } from './voicemail.js';

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
const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((sum, x) => sum + x * x, 0) / Math.max(1, pcm.length));
const at = (ms: number, rate = 8000) => Math.round((ms / 1000) * rate);

const DOC = path.join(repoRoot, 'docs', 'amd-answers.md');
const BEGIN = '<!-- amd-answers:begin (made from tests/infra/src/amdAnswers.ts: VP_UPDATE_DOCS=1 and run amd-answers.test.ts) -->';
const END = '<!-- amd-answers:end -->';

describe('AMD_ANSWERS, the labelled set', () => {
  it('has at least 40 answers, machines at +15005558NNN and people at +15005556NNN, each number once', () => {
    expect(AMD_ANSWERS.length).toBeGreaterThanOrEqual(40);
    const machines = AMD_ANSWERS.filter((a) => a.label === 'machine');
    const humans = AMD_ANSWERS.filter((a) => a.label === 'human');
    expect(machines.length).toBeGreaterThanOrEqual(20);
    expect(humans.length).toBeGreaterThanOrEqual(20);
    expect(machines.length + humans.length).toBe(AMD_ANSWERS.length);
    expect(new Set(AMD_ANSWERS.map((a) => a.number)).size).toBe(AMD_ANSWERS.length);
    machines.forEach((a, i) => expect(a.number).toBe(machineNumber(i)));
    humans.forEach((a, i) => expect(a.number).toBe(humanNumber(i)));
    expect(machineNumber(0)).toBe('+15005558000');
    expect(humanNumber(19)).toBe('+15005556019');
    expect(amdAnswer(machineNumber(machines.length))).toBeUndefined();
    // Varied: voices, speeds, with and without a beep, with and without noise, greetings with and without "leave a message".
    expect(new Set(machines.map((a) => a.voice)).size).toBeGreaterThanOrEqual(8);
    expect(new Set(AMD_ANSWERS.map((a) => a.speed)).size).toBeGreaterThanOrEqual(6);
    expect([machines.some((a) => a.beep), machines.some((a) => !a.beep), humans.some((a) => a.beep)]).toEqual([true, true, false]);
    expect([machines.some((a) => a.noise), humans.some((a) => a.noise), machines.some((a) => !a.noise)]).toEqual([true, true, true]);
    expect(machines.filter((a) => !/leave (a|me a|us a) message|record your message/i.test(a.text)).length).toBeGreaterThanOrEqual(3);
    for (const a of machines.filter((m) => m.beep)) expect([a.beepHz! >= 350 && a.beepHz! <= 2100, a.beepMs! >= 300 && a.beepMs! <= 1000]).toEqual([true, true]);
    for (const a of machines) expect(a.speechMs).toBeGreaterThanOrEqual(2000);
    for (const a of machines) expect(a.speechMs).toBeLessThanOrEqual(15_000);
  });

  it('is listed in docs/amd-answers.md', () => {
    const doc = readFileSync(DOC, 'utf8');
    const table = amdAnswersMarkdown();
    const [start, end] = [doc.indexOf(BEGIN), doc.indexOf(END)];
    expect([start >= 0, end > start]).toEqual([true, true]);
    const listed = doc.slice(start + BEGIN.length, end).trim();
    if (listed !== table && process.env.VP_UPDATE_DOCS === '1') {
      writeFileSync(DOC, `${doc.slice(0, start + BEGIN.length)}\n${table}\n${doc.slice(end)}`);
      return;
    }
    expect(listed).toBe(table);
    for (const a of AMD_ANSWERS) expect(listed).toContain(`| \`${a.number}\` | ${a.label} |`);
  });

  it('says each line as listed: its words for speechMs from leadMs, the beep after them, noise where told, silence otherwise', () => {
    const tmp = mkdtempSync(path.join(tmpdir(), 'vp-amd-'));
    try {
      for (const a of AMD_ANSWERS) {
        const { pcm, speechMs, timeline } = amdAudio(a, tmp);
        // espeak-ng 1.51 as Debian trixie ships it: within a few per cent of the listed duration.
        expect([a.number, Math.abs(speechMs - a.speechMs!) <= Math.max(60, a.speechMs! * 0.03)]).toEqual([a.number, true]);
        expect(pcm.length).toBe(at(timeline.hangsUpMs + 5000));
        const words = pcm.subarray(at(timeline.speechStartMs), at(timeline.speechEndMs));
        expect([a.number, rms(words) > 1500]).toEqual([a.number, true]);
        const lead = pcm.subarray(0, at(timeline.speechStartMs));
        const tail = pcm.subarray(at(timeline.endMs + 200), at(timeline.endMs + 3200));
        const quiet = a.noise ? [60, 600] : [0, 0];
        for (const part of [lead, tail]) expect([a.number, rms(part) >= quiet[0]! && rms(part) <= quiet[1]!]).toEqual([a.number, true]);
        if (a.beep) {
          const beep = pcm.subarray(at(timeline.beepStartMs! + 20), at(timeline.beepEndMs! - 20));
          expect([a.number, toneShare(beep, 8000, a.beepHz!) > 0.9]).toEqual([a.number, true]);
        }
      }
      // Deterministic: the same audio every time (the pcaps are cached by what they are made from).
      const a = AMD_ANSWERS.find((x) => x.noise && x.beep)!;
      expect(Buffer.from(amdAudio(a, tmp).pcm.buffer).equals(Buffer.from(amdAudio(a, tmp).pcm.buffer))).toBe(true);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('is in the phone\'s files: a pcap per answer, named in the scenario, with the machines\' media at the recorder', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vp-amd-'));
    try {
      const scenario = readFileSync(writePhoneFiles(dir, 'yes i will pay', 5000, '/phone'), 'utf8');
      for (const a of AMD_ANSWERS) {
        expect(statSync(path.join(dir, amdPcapName(a))).size).toBeGreaterThan(100_000);
        expect(scenario).toContain(`play_pcap_audio="/phone/${amdPcapName(a)}"`);
        expect(scenario).toContain(`timeout="${amdTimeline(a).hangsUpMs}"`);
      }
      expect(scenario).toContain("'[voicemail_dir]/calls.log'");
      expect(scenario).toContain('m=audio [recorder_port] RTP/AVP 0 101');
      // Nothing left behind, and a second build keeps what is there.
      expect(readdirSync(dir).filter((f) => f.includes('tmp') || f.startsWith('amd-') && !f.endsWith('.pcap'))).toEqual([]);
      const before = statSync(path.join(dir, amdPcapName(AMD_ANSWERS[0]!))).mtimeMs;
      writeAmdPcaps(dir, (file, ulaw) => writeRtpPcap(file, ulaw, 0, ulaw.length / 8));
      expect(statSync(path.join(dir, amdPcapName(AMD_ANSWERS[0]!))).mtimeMs).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('µ-law: linearToUlaw is the inverse of ulawToLinear', () => {
    for (let code = 0; code < 256; code++) if (code !== 0x7f) expect(linearToUlaw(ulawToLinear(code))).toBe(code);
    expect(linearToUlaw(0)).toBe(0xff);
  });
});

describe('the answering machines and people on the test phone', () => {
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
    await dispose();
    await env?.stop();
  });

  async function joinRoom(room: string, identity: string): Promise<Room> {
    const token = new AccessToken(env.env.LIVEKIT_API_KEY!, env.env.LIVEKIT_API_SECRET!, { identity, ttl: '10m' });
    token.addGrant({ room, roomJoin: true, canPublish: true, canSubscribe: true });
    const r = new Room();
    await r.connect(env.env.LIVEKIT_URL!, await token.toJwt(), { autoSubscribe: true, dynacast: false });
    return r;
  }

  /** The phone's INVITE for its latest call to `number`, from its message trace: the Call-ID and livekit-sip's m=audio port. */
  function invite(number: string): { callId: string; rtpPort: number } {
    const blocks = readFileSync(phone.messageLog, 'utf8').split(/^-{5,}.*$/m).filter((b) => /message received/.test(b));
    const last = blocks.filter((b) => new RegExp(`^INVITE sip:\\${number}@`, 'm').test(b)).pop() ?? '';
    return { callId: last.match(/^Call-ID:\s*(\S+)/im)?.[1] ?? '', rtpPort: Number(last.match(/^m=audio (\d+)/m)?.[1] ?? 0) };
  }

  /** 20 ms frames of a 16 kHz tone (whole cycles per frame: one unbroken tone). */
  const TONE_HZ = 400;
  const TONE_20MS = new Int16Array(320).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * TONE_HZ * i) / 16000)));

  /**
   * Calls `a`'s number into a new room where a listener waits (publishing a tone if asked), and hears
   * the callee's track for `listenMs` after the answer: each 16 kHz frame with its arrival (ms from the answer).
   */
  async function callAndHear(a: AmdAnswer, listenMs: number, opts: { tone?: boolean; hangUp?: boolean } = {}) {
    const room = `amd-${a.number.slice(-4)}-${randomBytes(3).toString('hex')}`;
    const listener = await joinRoom(room, 'listener');
    const source = new AudioSource(16000, 1);
    let playing = !!opts.tone;
    let tone: Promise<void> = Promise.resolve();
    try {
      const track = new Promise<RemoteTrack>((resolve) =>
        listener.on(RoomEvent.TrackSubscribed, (t: RemoteTrack, _pub: unknown, p: RemoteParticipant) => p.identity === 'callee' && resolve(t)),
      );
      if (opts.tone) {
        await listener.localParticipant!.publishTrack(LocalAudioTrack.createAudioTrack('tone', source), new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
        tone = (async () => {
          while (playing) await source.captureFrame(new AudioFrame(TONE_20MS.slice(), 16000, 1, 320));
        })().catch(() => undefined);
      }
      await sip.createSipParticipant(trunkId, a.number, room, { participantIdentity: 'callee', waitUntilAnswered: true });
      const answeredAt = Date.now();
      const frames: Array<{ ms: number; pcm: Int16Array }> = [];
      const stream = new AudioStream(await track, { sampleRate: 16000, numChannels: 1, frameSizeMs: 20 });
      const reader = stream.getReader();
      const deadline = answeredAt + listenMs;
      while (Date.now() < deadline) {
        const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now())))]);
        if (!next || next.done) break;
        frames.push({ ms: Date.now() - answeredAt, pcm: next.value.data.slice() });
      }
      reader.releaseLock();
      await stream.cancel().catch(() => undefined);
      const participants = (await rooms.listParticipants(room)).map((p) => [p.identity, p.attributes['sip.callStatus']]);
      if (opts.hangUp !== false) await rooms.removeParticipant(room, 'callee');
      return { room, frames, participants };
    } finally {
      playing = false;
      await tone;
      await source.close();
      await listener.disconnect();
    }
  }

  /** From the first loud frame to the end of the last one (ms from the answer). */
  function loudSpan(frames: Array<{ ms: number; pcm: Int16Array }>, threshold = 2000): { first: number; last: number } | null {
    const loud = frames.filter((f) => f.pcm.some((x) => Math.abs(x) > threshold));
    return loud.length ? { first: loud[0]!.ms - 20, last: loud[loud.length - 1]!.ms } : null;
  }

  it('a machine with a beep answers, its greeting and beep reach the room, and it records what the room says to it', async () => {
    const a = amdAnswer(machineNumber(0))!;
    expect(a).toMatchObject({ label: 'machine', beep: true, beepHz: 1000 });
    const tl = amdTimeline(a);
    const { frames, participants } = await callAndHear(a, tl.endMs + 3000, { tone: true });
    expect(participants).toEqual(expect.arrayContaining([['callee', 'active']]));
    const span = loudSpan(frames)!;
    // The greeting and the beep, for about their length (the room hears them some 100–500 ms late).
    expect(span.first).toBeGreaterThanOrEqual(tl.speechStartMs - 100);
    expect(span.first).toBeLessThan(tl.speechStartMs + 1500);
    expect(Math.abs(span.last - span.first - (tl.endMs - tl.speechStartMs))).toBeLessThan(700);
    // Its last part is the beep: a steady 1000 Hz tone.
    const beep = frames.filter((f) => f.ms > span.last - a.beepMs! + 150 && f.ms <= span.last - 60);
    expect(beep.length).toBeGreaterThan(5);
    const beepPcm = new Int16Array(beep.flatMap((f) => [...f.pcm]));
    expect(toneShare(beepPcm, 16000, a.beepHz!)).toBeGreaterThan(0.8);

    // What it recorded: the room's tone, as 8 kHz G.711 from livekit-sip, in the file readVoicemail finds for this call.
    const call = invite(a.number);
    expect(call.callId).not.toBe('');
    await waitUntil(() => (phone.voicemail(a.number)?.pcm.length ?? 0) >= 8000 * 3, { what: 'three seconds in the voicemail', timeoutMs: 10_000 });
    const vm = phone.voicemail(a.number)!;
    expect(vm).toMatchObject({ number: a.number, callId: call.callId, rtpPort: call.rtpPort, sampleRate: 8000 });
    expect(path.dirname(vm.file)).toBe(env.env.SIP_PHONE_VOICEMAIL_DIR);
    expect(toneShare(vm.pcm.subarray(vm.pcm.length - 8000), 8000, TONE_HZ)).toBeGreaterThan(0.8);
    // The WAV itself: 16-bit 8 kHz mono.
    const wav = readFileSync(vm.file);
    expect([wav.toString('ascii', 0, 4), wav.readUInt16LE(22), wav.readUInt32LE(24), wav.readUInt16LE(34)]).toEqual(['RIFF', 1, 8000, 16]);
    // The call may still be recording: the file read now holds at least what was read above, the same samples first.
    const now = readWav(wav);
    expect(now.length).toBeGreaterThanOrEqual(vm.pcm.length);
    expect(Buffer.from(now.buffer, now.byteOffset, vm.pcm.length * 2).equals(Buffer.from(vm.pcm.buffer, vm.pcm.byteOffset, vm.pcm.length * 2))).toBe(true);
  });

  it('a machine without a beep answers and its greeting reaches the room; its recording is its own call\'s (silence)', async () => {
    const a = amdAnswer(machineNumber(4))!;
    expect(a).toMatchObject({ label: 'machine', beep: false, noise: true });
    const tl = amdTimeline(a);
    const { frames, participants } = await callAndHear(a, tl.endMs + 3000);
    expect(participants).toEqual(expect.arrayContaining([['callee', 'active']]));
    const span = loudSpan(frames)!;
    expect(span.first).toBeLessThan(tl.speechStartMs + 1500);
    expect(Math.abs(span.last - span.first - a.speechMs!)).toBeLessThan(700);
    // Only line noise after the greeting.
    expect(frames.filter((f) => f.ms > span.last + 300).every((f) => f.pcm.every((x) => Math.abs(x) < 2000))).toBe(true);

    const call = invite(a.number);
    await waitUntil(() => phone.voicemail(a.number)?.callId === call.callId && existsSync(phone.voicemail(a.number)!.file), { what: 'the voicemail file', timeoutMs: 10_000 });
    const vm = phone.voicemail(a.number)!;
    expect(vm.rtpPort).toBe(call.rtpPort);
    // Nobody spoke to it: not the first machine's tone.
    expect(vm.pcm.every((x) => Math.abs(x) < 1000)).toBe(true);
    expect(phone.voicemail(machineNumber(0))!.callId).not.toBe(vm.callId);
  });

  it('a person answers, says their short line into the room and stays on quietly', async () => {
    const a = amdAnswer(humanNumber(2))!;
    expect(a).toMatchObject({ label: 'human', text: 'Hi, this is Dana.' });
    const tl = amdTimeline(a);
    const { frames, participants } = await callAndHear(a, tl.endMs + 4000);
    const span = loudSpan(frames)!;
    expect(span.first).toBeLessThan(tl.speechStartMs + 1500);
    expect(Math.abs(span.last - span.first - a.speechMs!)).toBeLessThan(600);
    expect(frames.filter((f) => f.ms > span.last + 300).every((f) => f.pcm.every((x) => Math.abs(x) < 2000))).toBe(true);
    // Still on after its line (a person hangs up only after 60 s), and no voicemail: it is not a machine.
    expect(participants).toEqual(expect.arrayContaining([['callee', 'active']]));
    expect(phone.voicemail(a.number)).toBeNull();
  });

  it('a +15005558NNN number the set does not define answers plainly: the phone\'s phrase 5 s after the answer, no recording', async () => {
    const number = machineNumber(AMD_ANSWERS.filter((a) => a.label === 'machine').length + 500);
    expect(amdAnswer(number)).toBeUndefined();
    const plain = { number, label: 'machine', leadMs: 0 } as AmdAnswer;
    const { frames, participants } = await callAndHear(plain, 7500);
    expect(participants).toEqual(expect.arrayContaining([['callee', 'active']]));
    // "yes i will pay" (the phone's phrase) at 5 s, as any answering number says it.
    const span = loudSpan(frames)!;
    expect(span.first).toBeGreaterThan(4500);
    expect(span.last - span.first).toBeLessThan(2000);
    expect(phone.voicemail(number)).toBeNull();
  });
});
