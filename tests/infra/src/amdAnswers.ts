// The test phone's labelled answers for answering machine detection (docs/design.md §10): answering
// machines at +15005558NNN and people at +15005556NNN, each saying its own line in its own espeak-ng
// voice and speed, some machines ending in a beep, some lines with noise on them. A bench and tests
// iterate over AMD_ANSWERS; docs/amd-answers.md lists them (amdAnswersMarkdown, checked by a test).
// The audio is made with the phone's files (writeAmdPcaps): deterministic, cached.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { cacheDir, binary } from './versions.js';
import { linearToUlaw } from '@voice-platform/schemas/node';

export type AmdLabel = 'machine' | 'human';

export interface AmdAnswer {
  /** The number that answers this way (machineNumber(i) / humanNumber(i)). */
  number: string;
  label: AmdLabel;
  /** What it says. ` … ` marks a pause of `pauseMs` inside the line. */
  text: string;
  /** espeak-ng voice (`-v`): a language and an optional variant, e.g. `en-us+f3`. */
  voice: string;
  /** espeak-ng speed (`-s`), words per minute. */
  speed: number;
  /** A steady tone after the greeting (machines only). */
  beep: boolean;
  /** Line noise mixed in from the answer on (low-level white noise or mains hum). */
  noise: boolean;
  /** How long the words last, first sound to last (pauses included, the beep not), as espeak-ng 1.51 says them. */
  speechMs?: number;
  /** Silence from the answer to the first word. */
  leadMs: number;
  /** The pause at each ` … ` of the text. */
  pauseMs?: number;
  /** The beep's frequency and length; it starts BEEP_GAP_MS after the words. */
  beepHz?: number;
  beepMs?: number;
  noiseKind?: 'white' | 'hum';
}

/** `+15005558NNN`: the i-th answering machine (i from 0; the machines AMD_ANSWERS defines). */
export function machineNumber(i: number): string {
  return amdNumber('8', i);
}
/** `+15005556NNN`: the i-th person who answers (i from 0; the people AMD_ANSWERS defines). */
export function humanNumber(i: number): string {
  return amdNumber('6', i);
}
function amdNumber(digit: string, i: number): string {
  if (!Number.isInteger(i) || i < 0 || i > 999) throw new RangeError(`answer index ${i}: 0–999`);
  return `+1500555${digit}${String(i).padStart(3, '0')}`;
}

/** From the end of the words to the beep. */
export const BEEP_GAP_MS = 400;
/** A machine stays on this long after its greeting (and beep) has ended, recording, unless hung up on. */
export const MACHINE_RECORDS_MS = 40_000;
/** A person stays on this long after answering, quiet after their line, unless hung up on. */
export const HUMAN_STAYS_MS = 60_000;

type Spec = Omit<AmdAnswer, 'number' | 'label' | 'beep' | 'noise'> & { beep?: [hz: number, ms: number]; noise?: 'white' | 'hum' };

// speechMs: measured from the audio writeAmdPcaps makes (amd-answers.test.ts checks them).
const MACHINES: Spec[] = [
  { text: "Hi, you've reached Dana. I can't take your call right now, please leave a message after the tone.", voice: 'en-us+f3', speed: 160, leadMs: 300, beep: [1000, 500], speechMs: 5976 },
  { text: 'Hello, you have reached the voicemail of Michael Brown. Please leave your name, number and a short message, and I will get back to you as soon as I can.', voice: 'en-gb+m3', speed: 170, leadMs: 400, beep: [850, 400], speechMs: 8088 },
  { text: 'The person you are calling is not available. At the tone, please record your message. When you are finished, hang up, or press pound for more options.', voice: 'en-us', speed: 175, leadMs: 200, beep: [1000, 800], speechMs: 8310 },
  { text: "Hey, it's Chris. Leave a message.", voice: 'en-us+m1', speed: 180, leadMs: 500, beep: [1000, 300], speechMs: 2153 },
  { text: "Hi, this is Priya. Sorry I missed you. Leave me a message and I'll call you back.", voice: 'en-gb+f2', speed: 165, leadMs: 400, noise: 'white', speechMs: 4994 },
  { text: "Hi, you've reached the Johnson family. We're not home right now, but we'd love to hear from you.", voice: 'en-us+f4', speed: 150, leadMs: 300, beep: [850, 600], speechMs: 6486 },
  {
    text: 'Thank you for calling Northwind Dental. Our office is currently closed. Our regular hours are Monday through Friday, eight a.m. to five p.m. If this is an emergency, please hang up and dial nine one one. Otherwise, please leave a message after the tone.',
    voice: 'en-us+f1', speed: 185, leadMs: 300, beep: [1000, 500], speechMs: 13978,
  },
  { text: 'You have reached five five five, one two three four. Please leave a message.', voice: 'en-us+m3', speed: 160, leadMs: 400, beep: [1000, 400], noise: 'hum', speechMs: 4629 },
  { text: "Hello. I'm not available to take your call. Please leave a message.", voice: 'en-gb-x-rp', speed: 150, leadMs: 600, speechMs: 4671 },
  { text: "Hi! It's Sarah. I'm probably out running, or at work. You know what to do.", voice: 'en-us+f5', speed: 190, leadMs: 300, beep: [1000, 500], noise: 'white', speechMs: 4598 },
  { text: 'The number you have dialed is not available. Please try again later, or leave a message after the tone.', voice: 'en-us', speed: 140, leadMs: 200, beep: [1000, 1000], speechMs: 6912 },
  { text: "Tom here. Can't get to the phone. Talk to you later.", voice: 'en-gb-scotland', speed: 175, leadMs: 500, beep: [850, 300], speechMs: 3215 },
  {
    text: "Hi, you've reached Alex Martinez at Contoso. I'm either on the other line or away from my desk. Please leave your name, your number, and a brief message, and I'll return your call as soon as possible. Thank you.",
    voice: 'en-us+m2', speed: 175, leadMs: 300, beep: [1000, 600], noise: 'hum', speechMs: 12077,
  },
  { text: 'Your call has been forwarded to an automatic voice message system. Seven seven three, five five five, zero one nine eight, is not available.', voice: 'en-us+f2', speed: 160, leadMs: 200, beep: [1000, 500], speechMs: 9587 },
  { text: "Hello, you've reached Emma and Jake. We can't come to the phone right now. Leave us a message and we'll get back to you.", voice: 'en-029', speed: 165, leadMs: 400, noise: 'hum', speechMs: 7265 },
  { text: "Hi, this is Doctor Patel's office. We are closed for the holiday, and will reopen on Monday morning.", voice: 'en-gb+f3', speed: 160, leadMs: 300, speechMs: 6051 },
  { text: 'Please leave a message after the tone.', voice: 'en-us+m4', speed: 170, leadMs: 300, beep: [1000, 400], speechMs: 2006 },
  { text: "Hello? … Ha, got you! This is Kevin's voicemail. Leave a message, and I'll call you back.", voice: 'en-us+m3', speed: 170, leadMs: 400, pauseMs: 1200, beep: [1000, 500], speechMs: 6695 },
  {
    text: "Hi, you've reached Olivia. I'm away from my phone at the moment. Please leave a detailed message, including the best time to reach you, and I will return your call within one business day. Thanks, and have a great day.",
    voice: 'en-us+f3', speed: 185, leadMs: 300, beep: [850, 500], speechMs: 11442,
  },
  { text: 'The subscriber you have dialed is not available.', voice: 'en-gb', speed: 160, leadMs: 200, beep: [1000, 300], noise: 'white', speechMs: 2581 },
  { text: "Hi, it's Dana again, on my new number. Leave me a message after the beep.", voice: 'en-us+f1', speed: 200, leadMs: 300, beep: [1000, 400], speechMs: 3907 },
  {
    text: 'Welcome to the Riverside Medical Center voicemail system. Please listen carefully, as our options have changed. To leave a message for the front desk, please wait for the tone.',
    voice: 'en-gb-x-rp+m2', speed: 150, leadMs: 300, beep: [1000, 700], noise: 'hum', speechMs: 11256,
  },
];

const HUMANS: Spec[] = [
  { text: 'Hello?', voice: 'en-us', speed: 175, leadMs: 400, speechMs: 427 },
  { text: 'Yes?', voice: 'en-gb+m3', speed: 170, leadMs: 600, speechMs: 332 },
  { text: 'Hi, this is Dana.', voice: 'en-us+f3', speed: 165, leadMs: 500, speechMs: 1343 },
  { text: 'Hello.', voice: 'en-us+m1', speed: 150, leadMs: 1500, speechMs: 511 },
  { text: 'Hello, this is John speaking, how can I help you today?', voice: 'en-gb', speed: 160, leadMs: 500, speechMs: 3455 },
  { text: 'Hello?', voice: 'en-us+f2', speed: 140, leadMs: 700, noise: 'white', speechMs: 670 },
  { text: 'Hi.', voice: 'en-us+m4', speed: 170, leadMs: 400, speechMs: 400 },
  { text: 'Yeah, hello?', voice: 'en-029', speed: 180, leadMs: 500, speechMs: 890 },
  { text: 'Good afternoon, Miller residence.', voice: 'en-gb-x-rp+f3', speed: 160, leadMs: 600, speechMs: 1918 },
  { text: "Hello, who's calling?", voice: 'en-us+f4', speed: 175, leadMs: 500, noise: 'hum', speechMs: 1428 },
  { text: 'This is Mark.', voice: 'en-gb-scotland', speed: 165, leadMs: 400, speechMs: 642 },
  { text: 'Hello? … Hello?', voice: 'en-us+m3', speed: 170, leadMs: 500, pauseMs: 1000, speechMs: 1817 },
  { text: 'Speaking.', voice: 'en-us+f5', speed: 170, leadMs: 800, speechMs: 554 },
  { text: "Hey, what's up?", voice: 'en-us+m2', speed: 190, leadMs: 300, noise: 'white', speechMs: 981 },
  { text: 'Hello, Anna speaking.', voice: 'en-gb+f1', speed: 160, leadMs: 500, speechMs: 1398 },
  { text: 'Yes, hello?', voice: 'en-us+f3', speed: 150, leadMs: 1500, noise: 'hum', speechMs: 1231 },
  { text: 'Hi, yes, this is she.', voice: 'en-us+f2', speed: 170, leadMs: 400, speechMs: 1850 },
  { text: "Hello, you've got Steve.", voice: 'en-gb+m1', speed: 175, leadMs: 500, speechMs: 1321 },
  { text: 'Hello, thanks for calling back so quickly, I was just about to ring you myself.', voice: 'en-us+m3', speed: 170, leadMs: 400, speechMs: 4706 },
  { text: 'Good morning!', voice: 'en-us+f1', speed: 165, leadMs: 600, noise: 'white', speechMs: 717 },
];

const answer = (label: AmdLabel, number: string, { beep, noise, ...s }: Spec): AmdAnswer => ({
  number,
  label,
  ...s,
  beep: !!beep,
  noise: !!noise,
  ...(beep ? { beepHz: beep[0], beepMs: beep[1] } : {}),
  ...(noise ? { noiseKind: noise } : {}),
});

/** Every labelled answer: the machines (+15005558000 up), then the people (+15005556000 up). */
export const AMD_ANSWERS: readonly AmdAnswer[] = Object.freeze([
  ...MACHINES.map((s, i) => answer('machine', machineNumber(i), s)),
  ...HUMANS.map((s, i) => answer('human', humanNumber(i), s)),
]);

/** The answer `number` gives, if it is one of AMD_ANSWERS (other +15005558/6 numbers answer plainly). */
export function amdAnswer(number: string): AmdAnswer | undefined {
  return AMD_ANSWERS.find((a) => a.number === number);
}

/** When each part of an answer happens, in ms from the answer. */
export interface AmdTimeline {
  speechStartMs: number;
  speechEndMs: number;
  /** The beep, when there is one. */
  beepStartMs?: number;
  beepEndMs?: number;
  /** The end of what it says (the beep included). */
  endMs: number;
  /** When the number hangs up itself unless the caller did: machines MACHINE_RECORDS_MS after `endMs`, people HUMAN_STAYS_MS after the answer. */
  hangsUpMs: number;
}

/** The answer's timeline for a given speech length (its `speechMs` unless given). */
export function amdTimeline(a: AmdAnswer, speechMs = a.speechMs ?? 0): AmdTimeline {
  const speechEndMs = a.leadMs + speechMs;
  const beep = a.beep ? { beepStartMs: speechEndMs + BEEP_GAP_MS, beepEndMs: speechEndMs + BEEP_GAP_MS + (a.beepMs ?? 0) } : {};
  const endMs = beep.beepEndMs ?? speechEndMs;
  return { speechStartMs: a.leadMs, speechEndMs, ...beep, endMs, hangsUpMs: a.label === 'machine' ? endMs + MACHINE_RECORDS_MS : HUMAN_STAYS_MS };
}

// ---- audio ----

// Math's functions as module constants: a global's lookup is slow inside jest's VM contexts, where these
// loops over a minute of samples per answer also run (30× slower with Math.sin & co).
const { abs, max, min, round, sin, sqrt, PI, imul } = Math;

const RATE = 8000;
/** A sample above this (in magnitude) is sound; espeak-ng's lead and tail below it are trimmed. */
const SOUND_THRESHOLD = 300;
/** Speech peaks at this level: the voices are as loud as one another. */
const SPEECH_PEAK = 20_000;
const BEEP_AMPLITUDE = 9000;
/** White noise's standard deviation, and the hum's amplitude (60 Hz and its odd harmonics). */
const NOISE_SD = 120;
const HUM_AMPLITUDE = 180;

/** One part of a line as espeak-ng says it, 8 kHz 16-bit, its silent lead and tail trimmed. */
function speak(text: string, voice: string, speed: number, tmp: string): Int16Array {
  const wav = path.join(tmp, 'speech.wav');
  const out = path.join(tmp, 'speech.s16');
  execFileSync(binary('espeak-ng'), ['-v', voice, '-s', String(speed), '-w', wav, text], { stdio: 'pipe' });
  // -D: no dither (sox's dither is random: the same words would differ from one build to the next).
  execFileSync(binary('sox'), ['-D', wav, '-r', String(RATE), '-c', '1', '-e', 'signed', '-b', '16', '-t', 'raw', out], { stdio: 'pipe' });
  const raw = readFileSync(out);
  const pcm = new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + (raw.length & ~1)));
  let [first, last] = [0, pcm.length - 1];
  while (first < pcm.length && abs(pcm[first]!) < SOUND_THRESHOLD) first++;
  while (last > first && abs(pcm[last]!) < SOUND_THRESHOLD) last--;
  return pcm.slice(first, last + 1);
}

/** A deterministic pseudo-random source (mulberry32) seeded by the number: the same noise every build. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An answer's audio as heard from the answer: 8 kHz 16-bit PCM, `totalMs` long (silence, or its noise, after what it says). */
export interface AmdAudio {
  pcm: Int16Array;
  speechMs: number;
  timeline: AmdTimeline;
}

/** Makes `a`'s audio (espeak-ng and sox, then the beep and the noise mixed in here), `totalMs` long (default: until it hangs up, plus 5 s). */
export function amdAudio(a: AmdAnswer, tmpDir: string, totalMs?: number): AmdAudio {
  const parts = a.text.split(' … ').map((t) => speak(t, a.voice, a.speed, tmpDir));
  const pauseLen = round(((a.pauseMs ?? 1000) / 1000) * RATE);
  const speechLen = parts.reduce((n, p, i) => n + p.length + (i ? pauseLen : 0), 0);
  const speechMs = round((speechLen / RATE) * 1000);
  const timeline = amdTimeline(a, speechMs);
  const total = round((((totalMs ?? timeline.hangsUpMs + 5000)) / 1000) * RATE);
  const out = new Float64Array(max(total, round((timeline.endMs / 1000) * RATE)));
  let peak = 1;
  for (const p of parts) for (const x of p) peak = max(peak, abs(x));
  let at = round((a.leadMs / 1000) * RATE);
  parts.forEach((p, i) => {
    if (i) at += pauseLen;
    for (let j = 0; j < p.length; j++) out[at + j] = (p[j]! * SPEECH_PEAK) / peak;
    at += p.length;
  });
  if (a.beep && timeline.beepStartMs !== undefined) {
    const start = round((timeline.beepStartMs / 1000) * RATE);
    const len = round(((a.beepMs ?? 0) / 1000) * RATE);
    const ramp = 40; // 5 ms in and out: no clicks
    for (let j = 0; j < len; j++) {
      const env = min(1, j / ramp, (len - 1 - j) / ramp);
      out[start + j] = out[start + j]! + BEEP_AMPLITUDE * env * sin((2 * PI * (a.beepHz ?? 1000) * j) / RATE);
    }
  }
  if (a.noise) {
    const rnd = random(Number(a.number.slice(-7)));
    for (let j = 0; j < out.length; j++) {
      if (a.noiseKind === 'hum') {
        const t = j / RATE;
        // Mains hum: 60 Hz and its odd harmonics, under a little hiss.
        const hum = sin(2 * PI * 60 * t) + 0.5 * sin(2 * PI * 180 * t) + 0.25 * sin(2 * PI * 300 * t);
        out[j] = out[j]! + HUM_AMPLITUDE * hum + 0.3 * NOISE_SD * (rnd() + rnd() + rnd() + rnd() - 2) * sqrt(3);
      } else {
        // Irwin–Hall (sum of 4 uniforms), near enough to Gaussian for line noise.
        out[j] = out[j]! + NOISE_SD * (rnd() + rnd() + rnd() + rnd() - 2) * sqrt(3);
      }
    }
  }
  const pcm = new Int16Array(out.length);
  for (let j = 0; j < out.length; j++) pcm[j] = max(-32768, min(32767, round(out[j]!)));
  return { pcm, speechMs, timeline };
}

export { linearToUlaw };

let ulawTable: Uint8Array | undefined;

export function pcmToUlaw(pcm: Int16Array): Buffer {
  // Every 16-bit sample's code, once: a minute of samples per answer.
  const table = (ulawTable ??= Uint8Array.from({ length: 65536 }, (_, i) => linearToUlaw(i - 32768)));
  const out = Buffer.alloc(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = table[pcm[i]! + 32768]!;
  return out;
}

/** The pcap an answer's number plays, by file name. */
export const amdPcapName = (a: AmdAnswer) => `amd-${a.number.slice(1)}.pcap`;

/** Bumped when the audio or the pcap format changes: the cached pcaps are made again. */
const PCAP_FORMAT = 1;

/**
 * Each answer's pcap in `dir` (a file already there is kept), played from the answer until the number
 * hangs up. `writePcap(file, ulaw)` writes 8 kHz µ-law as RTP (telephony.ts writeRtpPcap). The audio is
 * deterministic, so each pcap is also kept in the cache (VP_CACHE_DIR) by what it is made from: a new
 * phone folder (every test run's) copies them instead of making them again (~2 s of espeak-ng and sox).
 */
export function writeAmdPcaps(dir: string, writePcap: (file: string, ulaw: Buffer) => void): void {
  const missing = AMD_ANSWERS.filter((a) => !existsSync(path.join(dir, amdPcapName(a))));
  if (!missing.length) return;
  const cache = path.join(cacheDir, 'phone-answers');
  let tmp: string | undefined;
  try {
    for (const a of missing) {
      const file = path.join(dir, amdPcapName(a));
      const cached = path.join(cache, `${createHash('sha256').update(JSON.stringify([PCAP_FORMAT, a])).digest('hex').slice(0, 32)}.pcap`);
      const part = `${file}.${process.pid}.tmp`;
      if (existsSync(cached)) {
        copyFileSync(cached, part);
      } else {
        tmp ??= mkdtempSync(path.join(dir, 'amd-'));
        writePcap(part, pcmToUlaw(amdAudio(a, tmp).pcm));
        try {
          mkdirSync(cache, { recursive: true });
          copyFileSync(part, `${cached}.${process.pid}.tmp`);
          renameSync(`${cached}.${process.pid}.tmp`, cached);
        } catch {
          /* no cache: made again next time */
        }
      }
      renameSync(part, file);
    }
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

// ---- docs ----

const cell = (s: string) => s.replace(/\|/g, '\\|');

/** The table of docs/amd-answers.md, from AMD_ANSWERS. */
export function amdAnswersMarkdown(): string {
  const rows = AMD_ANSWERS.map((a) => {
    const tl = amdTimeline(a);
    const extras = [
      a.beep ? `beep ${a.beepHz} Hz ${a.beepMs} ms` : a.label === 'machine' ? 'no beep' : '',
      a.noise ? (a.noiseKind === 'hum' ? 'hum' : 'white noise') : '',
      a.pauseMs ? `pause ${a.pauseMs} ms at …` : '',
    ].filter(Boolean);
    const speech = `${(a.speechMs! / 1000).toFixed(1)} s from ${(a.leadMs / 1000).toFixed(1)} s`;
    return `| \`${a.number}\` | ${a.label} | ${cell(a.text)} | \`${a.voice}\` ${a.speed} | ${speech} | ${extras.join(', ') || '–'} | ${(tl.hangsUpMs / 1000).toFixed(1)} s |`;
  });
  return [
    '| Number | Label | Says | Voice, wpm | Speech | Beep, noise | Hangs up at |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
