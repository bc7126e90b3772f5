// The telephony plane's real services (docs/design.md §7): livekit-server with its own Redis, livekit-sip,
// and the local test phone (sipp as a SIP callee with "magic" numbers). Everything on 127.0.0.1,
// except livekit-sip's RTP sockets, which its source binds to every address (no setting).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { binary, repoRoot } from './versions.js';
import { freePort, redisPing, startProcess, waitUntil } from './process.js';
import { ports as pick, ProcessService, type ServiceOptions } from './processService.js';
import { AMD_ANSWERS, amdPcapName, amdTimeline, writeAmdPcaps, type AmdAnswer } from './amdAnswers.js';
import { readVoicemail, type Voicemail } from './voicemail.js';

type Opts = ServiceOptions;

/** Processes started in order, stopped in reverse; they stop quickly (5 s grace). */
abstract class Procs extends ProcessService {
  protected override readonly stopGraceMs = 5000;
}

/**
 * The tests' key pair: the key is fixed, the secret new for every test run: scripts/test.sh makes one
 * for the whole `make test` (VP_LIVEKIT_TEST_SECRET), so its last step can look for it in every log;
 * otherwise one per process.
 */
export const LIVEKIT_DEV_KEY = 'vp-dev-key';
export const LIVEKIT_DEV_SECRET = process.env.VP_LIVEKIT_TEST_SECRET || randomBytes(24).toString('hex');

export type LiveKitOptions = Opts & { apiKey?: string; apiSecret?: string; webhookUrl?: string };

/**
 * livekit-server + livekit-sip, and a Redis of their own (SIP needs one; keeping it apart means
 * the platform's Redis outage tests never take the telephony plane down with them).
 * Ports: [http, rtc udp, redis, sip, rtp range start]; the RTP range is 200 ports.
 */
export class LiveKit extends Procs {
  readonly name = 'livekit' as const;
  env: Record<string, string> = {};
  httpPort = 0;
  private udpPort = 0;
  private redisPort = 0;
  sipPort = 0;
  private rtpStart = 0;
  private sipHealthPort = 0;
  readonly apiKey: string;
  readonly apiSecret: string;
  /** Where livekit-server posts its signed webhooks (the backend's /livekit/webhook); none without it. */
  readonly webhookUrl: string | undefined;

  private constructor(opts: LiveKitOptions) {
    super(opts);
    this.apiKey = opts.apiKey ?? LIVEKIT_DEV_KEY;
    this.apiSecret = opts.apiSecret ?? LIVEKIT_DEV_SECRET;
    this.webhookUrl = opts.webhookUrl;
  }

  static async create(opts: LiveKitOptions): Promise<LiveKit> {
    const svc = new LiveKit(opts);
    [svc.httpPort, svc.udpPort, svc.redisPort, svc.sipPort, svc.sipHealthPort] = await pick(opts, 5);
    // A 200-port RTP range that is unlikely to collide with another suite's (RTP is UDP only).
    // Below the kernel's ephemeral range (32768 up), where freePort's ports (sipp's, other services') come from.
    svc.rtpStart = opts.ports?.[5] ?? 10000 + Math.floor(Math.random() * 100) * 200;
    svc.env = {
      LIVEKIT_URL: `ws://127.0.0.1:${svc.httpPort}`,
      LIVEKIT_API_KEY: svc.apiKey,
      LIVEKIT_API_SECRET: svc.apiSecret,
      LIVEKIT_SIP_ADDRESS: `127.0.0.1:${svc.sipPort}`,
    };
    return svc;
  }

  async start(): Promise<void> {
    const dir = this.opts.dir;
    // The `make up` stack keeps LiveKit's state (the trunks and dispatch rules the backend mirrored into
    // it) across a stop and start, as the backend keeps its side; tests start from nothing.
    const durable = this.opts.persistent ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
    const redis = this.launch('livekit-redis', binary('redis-server'), [
      '--port', String(this.redisPort), '--bind', '127.0.0.1', '--save', '', ...durable, '--dir', dir, '--daemonize', 'no',
    ]);
    await waitUntil(() => redisPing(this.redisPort), { what: 'LiveKit Redis', proc: redis });

    await this.launchWithConfig('livekit-server', 'livekit.yaml', this.httpPort, [
      `port: ${this.httpPort}`,
      'bind_addresses: [127.0.0.1]',
      'rtc:',
      `  udp_port: ${this.udpPort}`,
      '  tcp_port: 0',
      '  node_ip: 127.0.0.1',
      '  use_external_ip: false',
      '  enable_loopback_candidate: true',
      '  interfaces: {includes: [lo]}',
      '  ips: {includes: [127.0.0.1/32]}',
      'redis:',
      `  address: 127.0.0.1:${this.redisPort}`,
      'keys:',
      `  ${this.apiKey}: ${this.apiSecret}`,
      ...(this.webhookUrl ? ['webhook:', `  api_key: ${this.apiKey}`, `  urls: [${JSON.stringify(this.webhookUrl)}]`] : []),
      'logging: {level: warn}',
    ]);
    await this.launchWithConfig('livekit-sip', 'sip.yaml', this.sipHealthPort, [
      `api_key: ${this.apiKey}`,
      `api_secret: ${this.apiSecret}`,
      `ws_url: ws://127.0.0.1:${this.httpPort}`,
      'redis:',
      `  address: 127.0.0.1:${this.redisPort}`,
      `sip_port: ${this.sipPort}`,
      'listen_ip: 127.0.0.1',
      'nat_1_to_1_ip: 127.0.0.1',
      `rtp_port: ${this.rtpStart}-${this.rtpStart + 199}`,
      `health_port: ${this.sipHealthPort}`,
      // Its CPU guard answers 503 on a busy 2-core machine; the platform's own capacity limits apply.
      'max_cpu_utilization: 1.0',
      'logging: {level: info}',
    ]);
  }

  /**
   * Writes `name`'s YAML config into the service's folder (owner-only: it holds the API secret), starts
   * it with that config and waits until its HTTP port at `healthPort` answers 200.
   */
  private async launchWithConfig(name: string, confFile: string, healthPort: number, lines: string[]): Promise<void> {
    const conf = path.join(this.opts.dir, confFile);
    writeFileSync(conf, [...lines, ''].join('\n'), { mode: 0o600 });
    const proc = this.launch(name, binary(name), ['--config', conf]);
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${healthPort}/`)).status === 200, { what: name, proc, timeoutMs: 60_000 });
  }
}

// The local test phone's numbers (docs/design.md §7), like test card numbers. Beyond the two the design
// names, a few more outcomes a carrier can give, so each has a number to test it with.
export const PHONE_NUMBERS = {
  /** Answers 486 Busy Here. */
  busy: '+15005550486',
  /** Rings and never answers (until the caller cancels). */
  noAnswer: '+15005550408',
  /** 404 Not Found: the number does not exist. */
  notFound: '+15005550404',
  /** 503 Service Unavailable: a carrier failure. */
  unavailable: '+15005550503',
  /** Answers, then hangs up 1.5 s later (mid-greeting). */
  hangsUp: '+15005550001',
  /** Answers and speaks its phrase 1.5 s later, into the greeting (barge-in). */
  interrupts: '+15005550002',
  /**
   * Any number not named here (nor a holding, listening, keypad, machine or human one below: AMD_ANSWERS
   * defines the machines and people, docs/amd-answers.md) answers, speaks the phrase and stays on until
   * the bot hangs up (or 60 s). Every answering number takes a transfer like a real phone: REFER → 202, a
   * NOTIFY saying `SIP/2.0 200 OK`, then its own BYE (Phone.refers lists them).
   */
  answers: '+15005550100',
  /** Answers like `answers` but refuses every transfer: 603 Decline to the REFER, and stays on. */
  refusesTransfer: '+15005554603',
  /**
   * The person a warm transfer reaches: answers with its media address at the ear's port (like the
   * listening numbers: a test hears what they hear), says "Hello, this is Sam." and hangs up 20 s later.
   */
  agent: '+15005553000',
  /** An agent who is on another call: 486 Busy Here. */
  agentBusy: '+15005553486',
} as const;

/**
 * A number that answers plainly (the phrase, then on until hung up or 60 s): +15005555000–+15005555999 or
 * +15005557000–+15005557999, which hold no holding, listening, keypad, agent, machine or person number.
 * Tests find a call's SIP messages by its number in the phone's trace, which every test file of a suite
 * shares: so a number is claimed by creating its file exclusively in a folder beside that trace (the
 * suite's phone's `SIP_PHONE_MESSAGES`), and no two processes of a suite ever get the same one.
 */
export function answeringNumber(): string {
  const log = process.env.SIP_PHONE_MESSAGES;
  const dir = log ? path.join(path.dirname(log), 'claimed-numbers') : undefined;
  if (dir) mkdirSync(dir, { recursive: true });
  for (let tried = 0; tried < 2000; tried++) {
    const i = (answeringStart + answeringSeq++) % 2000;
    const number = `+1500555${i < 1000 ? 5 : 7}${String(i % 1000).padStart(3, '0')}`;
    if (!dir) return number;
    try {
      closeSync(openSync(path.join(dir, number), 'wx'));
      return number;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error('answeringNumber: all 2000 answering numbers of this suite are taken');
}
const answeringStart = Math.floor(Math.random() * 2000);
let answeringSeq = 0;

/** What the agent says once it answered (after AGENT_SPEAKS_AFTER_MS), and how long it stays on. */
export const AGENT_PHRASE = 'Hello, this is Sam.';
const AGENT_SPEAKS_AFTER_MS = 1000;
const AGENT_STAYS_MS = 20_000;

/**
 * `+15005559SSS`: answers, stays silent and hangs up itself after SSS seconds (1–300): a caller who holds
 * the line for a known time (fleet scaling tests: a call that ends when the test wants it to).
 */
export function holdNumber(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_HOLD_SECONDS) throw new RangeError(`hold of ${seconds} s: 1–${MAX_HOLD_SECONDS}`);
  return `+15005559${String(seconds).padStart(3, '0')}`;
}
const MAX_HOLD_SECONDS = 300;

/**
 * `+150055507SS`: answers with its media address at the ear's port (`SIP_PHONE_EAR_PORT`, tests/infra
 * ear.ts), sends nothing, and hangs up itself after SS seconds (1–99): what livekit-sip sends the
 * callee (the bot's voice as a phone line carries it) reaches a test.
 */
export function listenNumber(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 99) throw new RangeError(`listening for ${seconds} s: 1–99`);
  return `+150055507${String(seconds).padStart(2, '0')}`;
}

/**
 * `+15005552` and 1–6 keys (through the API, 3 keys: a +1 number has 10 digits, libphonenumber): answers, presses those keys and `#` 3 s later (RFC 4733 events, one every
 * KEY_GAP_MS), then speaks its phrase `speakAfterMs` after that and stays on like an answering number.
 */
export function keypadNumber(keys: string): string {
  if (!/^[0-9]{1,6}$/.test(keys)) throw new RangeError(`keypad keys ${JSON.stringify(keys)}: 1–6 of 0-9`);
  return `+15005552${keys}`;
}
const MAX_KEYPAD_KEYS = 6;
/** Before the first key (after the answer), and from one key to the next. */
const KEYPAD_DELAY_MS = 3000;
const KEY_GAP_MS = 250;
/** The keys a keypad pcap exists for, by file name. */
const KEY_FILES: Record<string, string> = { '0': '0', '1': '1', '2': '2', '3': '3', '4': '4', '5': '5', '6': '6', '7': '7', '8': '8', '9': '9', '#': 'pound' };
/** A key's RFC 4733 pcap; `parity` alternates from key to key (see writeKeyPcap). */
const keyPcapName = (parity: number, key: string) => `key-${parity}-${KEY_FILES[key]}.pcap`;

/**
 * The keypad numbers' steps: the keys are read off the dialled number with one regular expression per
 * position and key (sipp plays only pcaps named in the scenario), each key played from its own pcap.
 */
function keypadSteps(keyPcap: (parity: number, key: string) => string, phrasePcap: string, silencePcap: string): { match: string; steps: string } {
  const match: string[] = [`      <ereg regexp="INVITE sip:\\+?15005552[0-9]{1,${MAX_KEYPAD_KEYS}}@" search_in="msg" check_it="false" assign_to="keypad"/>`];
  const steps: string[] = [
    '  <label id="keypad"/>',
    '  <nop>',
    '    <action>',
    `      <exec play_pcap_audio="${silencePcap}"/>`,
    '    </action>',
    '  </nop>',
    `  <pause milliseconds="${KEYPAD_DELAY_MS}"/>`,
  ];
  const play = (label: string, pcap: string, next: string) => [
    `  <label id="${label}"/>`,
    '  <nop>',
    '    <action>',
    `      <exec play_pcap_audio="${pcap}"/>`,
    '    </action>',
    '  </nop>',
    `  <pause milliseconds="${KEY_GAP_MS}" next="${next}"/>`,
  ];
  for (let p = 1; p <= MAX_KEYPAD_KEYS + 1; p++) {
    steps.push(`  <label id="kpos${p}"/>`);
    if (p <= MAX_KEYPAD_KEYS) {
      for (let d = 0; d <= 9; d++) {
        const before = p > 1 ? `[0-9]{${p - 1}}` : '';
        match.push(`      <ereg regexp="INVITE sip:\\+?15005552${before}${d}[0-9]*@" search_in="msg" check_it="false" assign_to="k${p}is${d}"/>`);
        steps.push(`  <nop test="k${p}is${d}" next="kpress${p}d${d}"/>`);
      }
    }
    // No key at this position: the keys are done, `#` ends them.
    steps.push(`  <nop next="kpound${p % 2}"/>`);
    if (p <= MAX_KEYPAD_KEYS) for (let d = 0; d <= 9; d++) steps.push(...play(`kpress${p}d${d}`, keyPcap(p % 2, String(d)), `kpos${p + 1}`));
  }
  for (const parity of [0, 1]) steps.push(...play(`kpound${parity}`, keyPcap(parity, '#'), 'kspeak'));
  steps.push('  <label id="kspeak"/>', '  <nop next="listen">', '    <action>', `      <exec play_pcap_audio="${phrasePcap}"/>`, '    </action>', '  </nop>');
  return { match: match.join('\n'), steps: steps.join('\n') };
}

const digits = (n: string) => n.replace('+', '\\+?');

/**
 * The answering machines' and people's steps (AMD_ANSWERS): only the numbers defined there are
 * recognised (a regular expression each, sipp plays only pcaps named in the scenario); the others of
 * +15005558… and +15005556… answer plainly. Each plays its pcap (what it says, then silence or line
 * noise) and waits for the caller's BYE until it hangs up itself (amdTimeline's hangsUpMs).
 */
function amdSteps(amdPcap: (a: AmdAnswer) => string) {
  const label = (a: AmdAnswer) => `amd${a.number.slice(-4)}`;
  const group = (l: AmdAnswer['label']) => AMD_ANSWERS.filter((a) => a.label === l);
  const any = (l: AmdAnswer['label'], name: string) =>
    `      <ereg regexp="INVITE sip:\\+?1500555${l === 'machine' ? 8 : 6}(${group(l).map((a) => a.number.slice(-3)).join('|')})@" search_in="msg" check_it="false" assign_to="${name}"/>`;
  const match = [
    any('machine', 'machine'),
    any('human', 'human'),
    ...AMD_ANSWERS.map((a) => `      <ereg regexp="INVITE sip:${digits(a.number)}@" search_in="msg" check_it="false" assign_to="${label(a)}"/>`),
    // What the machines log for the recorder: the number dialled, livekit-sip's RTP port, the Call-ID.
    // (The whole match and the group go to the same variable: the group is assigned last, and sipp refuses
    // a variable it sees only once.)
    '      <ereg regexp="INVITE sip:\\+?([0-9]+)@" search_in="msg" check_it="false" assign_to="dialled,dialled"/>',
    '      <ereg regexp="m=audio ([0-9]+)" search_in="msg" check_it="false" assign_to="rtp_port,rtp_port"/>',
    `      <ereg regexp="[^'[:space:]]+" search_in="hdr" header="Call-ID:" check_it="false" assign_to="invite_call"/>`,
  ].join('\n');
  const steps = (l: AmdAnswer['label'], byeReply: string) => {
    const answers = group(l);
    return [
      ...answers.map((a) => `  <nop test="${label(a)}" next="${label(a)}"/>`),
      '  <nop next="end"/>',
      ...answers.flatMap((a) => [
        `  <label id="${label(a)}"/>`,
        '  <nop>',
        '    <action>',
        `      <exec play_pcap_audio="${amdPcap(a)}"/>`,
        '    </action>',
        '  </nop>',
        `  <recv request="BYE" timeout="${amdTimeline(a).hangsUpMs}" ontimeout="hangup"/>`,
        byeReply,
        '  <nop next="end"/>',
      ]),
    ].join('\n');
  };
  return { match, machineSteps: (byeReply: string) => steps('machine', byeReply), humanSteps: (byeReply: string) => steps('human', byeReply) };
}

/** The SDP both sipp roles (the phone and the caller) offer: PCMU and DTMF events, 20 ms frames. */
const audioSdp = (user: string, port = '[media_port]') => `v=0
      o=${user} 53655765 2353687637 IN IP[local_ip_type] [local_ip]
      s=-
      c=IN IP[media_ip_type] [media_ip]
      t=0 0
      m=audio ${port} RTP/AVP 0 101
      a=rtpmap:0 PCMU/8000
      a=rtpmap:101 telephone-event/8000
      a=fmtp:101 0-16
      a=ptime:20
      a=sendrecv`;

/** sipp's SIP, media and control sockets, all on loopback. */
const sippLoopback = (sipPort: number, mediaPort: number, controlPort: number) => [
  '-i', '127.0.0.1',
  '-p', String(sipPort),
  '-mi', '127.0.0.1',
  '-mp', String(mediaPort),
  '-ci', '127.0.0.1',
  '-cp', String(controlPort),
];

/** sipp unattended, tracing every SIP message and error to these files (what the tests read). */
const sippTraces = (messageFile: string, errorFile: string) => [
  '-nostdin',
  '-trace_msg',
  '-message_file', messageFile,
  '-trace_err',
  '-error_file', errorFile,
];

/** Scenario steps that hang up: the BYE (resent until answered), up to 5 s for its 200, then the end. */
const hangUp = (byeHeaders: string) => `  <send retrans="500">
    <![CDATA[
      ${byeHeaders}
      Content-Length: 0
    ]]>
  </send>
  <recv response="200" timeout="5000" ontimeout="end"/>
  <nop next="end"/>`;

/** Where the phone's scenario reads its audio: the phrase (after `speakAfterMs`, and after 1.5 s), silence, the agent's words, keys. */
export interface PhoneMedia {
  pcap: string;
  earlyPcap: string;
  silencePcap: string;
  agentPcap: string;
  keyPcap: (parity: number, key: string) => string;
  /** An answer's audio (amdAnswers.ts), from the answer until its number hangs up. */
  amdPcap: (a: AmdAnswer) => string;
}

/** The BYE the phone hangs up with (its dialog's first request unless a NOTIFY went before it, so `cseq`). */
const phoneBye = (cseq: number) => `BYE [$remote_contact] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: [$remote_to];tag=[pid]vp[call_number]
      To: [$remote_from]
      [last_Call-ID:]
      CSeq: ${cseq} BYE
      Contact: <sip:phone@[local_ip]:[local_port];transport=[transport]>
      Max-Forwards: 70`;

/**
 * The phone's scenario: one UAS that branches on the dialled number. The sipp keys it needs: `ear_port`
 * (the listening and agent numbers' media address), `refer_log` (the file each REFER is appended to),
 * `recorder_port` (the answering machines' media address: phone-recorder.mjs) and `voicemail_dir`
 * (where the machines log each call they answer, calls.log, for the recorder).
 */
export function phoneScenario({ pcap, earlyPcap, silencePcap, agentPcap, keyPcap, amdPcap }: PhoneMedia): string {
  const keypad = keypadSteps(keyPcap, pcap, silencePcap);
  const amd = amdSteps(amdPcap);
  const reply = (status: string, extra = '', body = '') => `
  <send>
    <![CDATA[
      SIP/2.0 ${status}
      [last_Via:]
      [last_From:]
      [last_To:];tag=[pid]vp[call_number]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:phone@[local_ip]:[local_port];transport=[transport]>
      ${extra}Content-Length: [len]
${body}
    ]]>
  </send>`;
  // A response within the dialog: the request's To already carries the phone's tag.
  const inDialogReply = (status: string) => `
  <send>
    <![CDATA[
      SIP/2.0 ${status}
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:phone@[local_ip]:[local_port];transport=[transport]>
      Content-Length: 0
    ]]>
  </send>`;
  const sdp = `Content-Type: application/sdp
      `;
  const sdpBody = `
      ${audioSdp('phone')}`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="voice-platform test phone">
  <recv request="INVITE" crlf="true">
    <action>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.busy)}@" search_in="msg" check_it="false" assign_to="busy"/>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.agentBusy)}@" search_in="msg" check_it="false" assign_to="busy"/>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.refusesTransfer)}@" search_in="msg" check_it="false" assign_to="refuses"/>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.agent)}@" search_in="msg" check_it="false" assign_to="agent"/>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.noAnswer)}@" search_in="msg" check_it="false" assign_to="noanswer"/>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.notFound)}@" search_in="msg" check_it="false" assign_to="notfound"/>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.unavailable)}@" search_in="msg" check_it="false" assign_to="unavailable"/>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.hangsUp)}@" search_in="msg" check_it="false" assign_to="hangsup"/>
      <ereg regexp="INVITE sip:${digits(PHONE_NUMBERS.interrupts)}@" search_in="msg" check_it="false" assign_to="interrupts"/>
      <ereg regexp="INVITE sip:\\+?15005559([0-9]{3})@" search_in="msg" check_it="false" assign_to="holds,hold_s"/>
      <ereg regexp="INVITE sip:\\+?150055507([0-9]{2})@" search_in="msg" check_it="false" assign_to="listens,listen_s"/>
${keypad.match}
${amd.match}
      <ereg regexp="CSeq: *[0-9]+ INVITE" search_in="msg" check_it="true" assign_to="invite_cseq"/>
      <ereg regexp=".*" search_in="hdr" header="From:" check_it="true" assign_to="remote_from"/>
      <ereg regexp=".*" search_in="hdr" header="To:" check_it="true" assign_to="remote_to"/>
      <ereg regexp="sip:[^>;]+" search_in="hdr" header="Contact:" check_it="true" assign_to="remote_contact"/>
    </action>
  </recv>
  <nop test="busy" next="busy"/>
  <nop test="noanswer" next="noanswer"/>
  <nop test="notfound" next="notfound"/>
  <nop test="unavailable" next="unavailable"/>
${reply('180 Ringing')}
  <pause milliseconds="300"/>
  <nop test="listens" next="listens"/>
  <nop test="agent" next="agent"/>
  <nop test="machine" next="machine"/>
${reply('200 OK', sdp, sdpBody)}
  <!--
    A REFER at any point of an answered call: optional="global" has sipp look back for it from wherever
    the call is, a pause included (every answering branch comes later in this file; sipp wants a
    mandatory recv after an optional one: the ACK). Logged as "<Call-ID> <Refer-To>"; each value stops
    at a quote, so neither can leave the shell's single quotes.
  -->
  <recv request="REFER" optional="global" next="refer">
    <action>
      <ereg regexp="[^'[:space:]]+" search_in="hdr" header="Call-ID:" check_it="true" assign_to="refer_call"/>
      <ereg regexp="[^'[:space:]][^']*" search_in="hdr" header="Refer-To:" check_it="true" assign_to="refer_to"/>
      <exec command="echo '[$refer_call] [$refer_to]' >> '[refer_log]'"/>
    </action>
  </recv>
  <recv request="ACK" timeout="10000" ontimeout="end"/>
  <nop test="hangsup" next="hangsup"/>
  <nop test="interrupts" next="early"/>
  <nop test="holds" next="holds"/>
  <nop test="keypad" next="keypad"/>
  <nop test="human" next="human"/>
  <nop>
    <action>
      <exec play_pcap_audio="${pcap}"/>
    </action>
  </nop>
  <label id="listen"/>
  <recv request="BYE" timeout="60000" ontimeout="hangup"/>
${inDialogReply('200 OK')}
  <nop next="end"/>

  <label id="refer"/>
  <nop test="refuses" next="refuse"/>
${inDialogReply('202 Accepted')}
  <!-- What a transferee tells the transferor once the new call is up (RFC 3515), then it leaves this call. -->
  <send retrans="500">
    <![CDATA[
      NOTIFY [$remote_contact] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: [$remote_to];tag=[pid]vp[call_number]
      To: [$remote_from]
      [last_Call-ID:]
      CSeq: 1 NOTIFY
      Contact: <sip:phone@[local_ip]:[local_port];transport=[transport]>
      Max-Forwards: 70
      Event: refer
      Subscription-State: terminated;reason=noresource
      Content-Type: message/sipfrag;version=2.0
      Content-Length: [len]

      SIP/2.0 200 OK
    ]]>
  </send>
  <recv response="200" timeout="5000" ontimeout="transferred"/>
  <label id="transferred"/>
${hangUp(phoneBye(2))}

  <label id="refuse"/>
${inDialogReply('603 Decline')}
  <nop next="listen"/>

  <label id="agent"/>
${reply('200 OK', sdp, `
      ${audioSdp('phone', '[ear_port]')}`)}
  <recv request="ACK" timeout="10000" ontimeout="end"/>
  <nop>
    <action>
      <exec play_pcap_audio="${agentPcap}"/>
    </action>
  </nop>
  <recv request="BYE" timeout="${AGENT_STAYS_MS}" ontimeout="hangup"/>
${inDialogReply('200 OK')}
  <nop next="end"/>

  <label id="early"/>
  <nop next="listen">
    <action>
      <exec play_pcap_audio="${earlyPcap}"/>
    </action>
  </nop>

${keypad.steps}

  <!--
    An answering machine: logs the call for the recorder ("<ms> <number> <livekit-sip's RTP port>
    <Call-ID>"; each value stops at a quote, so none can leave the shell's single quotes), then answers
    with its media address at the recorder's port, so what the caller says is recorded.
  -->
  <label id="machine"/>
  <nop>
    <action>
      <exec command="echo $(date +%s%3N) '+[$dialled] [$rtp_port] [$invite_call]' >> '[voicemail_dir]/calls.log'"/>
    </action>
  </nop>
${reply('200 OK', sdp, `
      ${audioSdp('phone', '[recorder_port]')}`)}
  <recv request="ACK" timeout="10000" ontimeout="end"/>
${amd.machineSteps(inDialogReply('200 OK'))}

  <label id="human"/>
${amd.humanSteps(inDialogReply('200 OK'))}

  <label id="holds"/>
  <nop>
    <action>
      <todouble assign_to="hold_ms" variable="hold_s"/>
      <multiply assign_to="hold_ms" value="1000"/>
      <exec play_pcap_audio="${silencePcap}"/>
    </action>
  </nop>
  <pause variable="hold_ms" next="hangup"/>

  <label id="listens"/>
${reply('200 OK', sdp, `
      ${audioSdp('phone', '[ear_port]')}`)}
  <recv request="ACK" timeout="10000" ontimeout="end">
    <action>
      <todouble assign_to="listen_ms" variable="listen_s"/>
      <multiply assign_to="listen_ms" value="1000"/>
    </action>
  </recv>
  <pause variable="listen_ms" next="hangup"/>

  <label id="hangsup"/>
  <pause milliseconds="1500"/>
  <label id="hangup"/>
${hangUp(phoneBye(1))}

  <label id="busy"/>
${reply('486 Busy Here')}
  <recv request="ACK" timeout="5000" ontimeout="end" next="end"/>

  <label id="notfound"/>
${reply('404 Not Found')}
  <recv request="ACK" timeout="5000" ontimeout="end" next="end"/>

  <label id="unavailable"/>
${reply('503 Service Unavailable')}
  <recv request="ACK" timeout="5000" ontimeout="end" next="end"/>

  <label id="noanswer"/>
${reply('180 Ringing')}
  <recv request="CANCEL" timeout="180000" ontimeout="end"/>
${reply('200 OK')}
  <send>
    <![CDATA[
      SIP/2.0 487 Request Terminated
      [last_Via:]
      [last_From:]
      [last_To:];tag=[pid]vp[call_number]
      [last_Call-ID:]
      [$invite_cseq]
      Content-Length: 0
    ]]>
  </send>
  <recv request="ACK" timeout="5000" ontimeout="end"/>

  <label id="end"/>
</scenario>
`;
}

/**
 * G.711 µ-law RTP packets in a pcap file (Ethernet/IPv4/UDP), the form sipp's play_pcap_audio plays:
 * `leadMs` of silence, the phrase, then silence up to `totalMs` (a real phone never stops sending RTP,
 * and livekit-sip hangs up on a silent line).
 */
export function writeRtpPcap(file: string, ulaw: Buffer, leadMs: number, totalMs: number): void {
  const frame = 160; // 20 ms at 8 kHz
  const silence = 0xff;
  const lead = Buffer.alloc(Math.round((leadMs / 1000) * 8000), silence);
  const tailLen = Math.max(0, Math.round((totalMs / 1000) * 8000) - lead.length - ulaw.length);
  const audio = Buffer.concat([lead, ulaw, Buffer.alloc(tailLen, silence)]);
  const packets: Array<{ rtp: Buffer; tUs: number }> = [];
  for (let i = 0, seq = 0; i < audio.length; i += frame, seq++) {
    const payload = Buffer.alloc(frame, silence);
    audio.copy(payload, 0, i, Math.min(i + frame, audio.length));
    // marker on the first packet; payload type 0 (PCMU)
    packets.push({ rtp: Buffer.concat([rtpHeader(seq === 0, 0, seq, seq * frame), payload]), tUs: seq * 20_000 });
  }
  writePcap(file, packets);
}

/** The phone's one RTP stream (audio and key events alike). */
const PHONE_SSRC = 0x5eed1234;
/** RFC 4733's payload type as the phone's SDP names it (telephone-event/8000). */
const TELEPHONE_EVENT_PT = 101;

function rtpHeader(marker: boolean, payloadType: number, seq: number, timestamp: number): Buffer {
  const rtp = Buffer.alloc(12);
  rtp[0] = 0x80;
  rtp[1] = (marker ? 0x80 : 0) | payloadType;
  rtp.writeUInt16BE(seq & 0xffff, 2);
  rtp.writeUInt32BE(timestamp >>> 0, 4);
  rtp.writeUInt32BE(PHONE_SSRC, 8);
  return rtp;
}

/**
 * One key press as RFC 4733 events (the way a phone sends DTMF, and what sip-tester's dtmf_2833 pcaps
 * hold): 160 ms of the event, a packet every 20 ms with its growing duration, then the end packet three
 * times. livekit-sip takes a packet whose timestamp differs from the last event's as a new key, so keys
 * alternate between two timestamps (`parity`): the same key twice in a row is two presses.
 */
export function writeKeyPcap(file: string, key: string, parity: number): void {
  const code = { '*': 10, '#': 11 }[key] ?? Number(key);
  if (!Number.isInteger(code) || code < 0 || code > 11) throw new RangeError(`not a key: ${key}`);
  const timestamp = (parity % 2 === 0 ? 0x00100000 : 0x00200000) >>> 0;
  const event = (duration: number, end: boolean) => Buffer.from([code, (end ? 0x80 : 0) | 10, (duration >> 8) & 0xff, duration & 0xff]);
  const packets: Array<{ rtp: Buffer; tUs: number }> = [];
  const seq0 = parity % 2 === 0 ? 40_000 : 50_000;
  for (let i = 0; i < 8; i++) packets.push({ rtp: Buffer.concat([rtpHeader(i === 0, TELEPHONE_EVENT_PT, seq0 + i, timestamp), event((i + 1) * 160, false)]), tUs: i * 20_000 });
  for (let i = 0; i < 3; i++) packets.push({ rtp: Buffer.concat([rtpHeader(false, TELEPHONE_EVENT_PT, seq0 + 8, timestamp), event(8 * 160, true)]), tUs: 160_000 + i * 50 });
  writePcap(file, packets);
}

/** RTP packets in a classic pcap file (Ethernet/IPv4/UDP, port 6000 to 6000: sipp rewrites the addresses). */
function writePcap(file: string, rtpPackets: Array<{ rtp: Buffer; tUs: number }>): void {
  const packets: Buffer[] = [];
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeUInt32LE(65535, 16);
  header.writeUInt32LE(1, 20); // Ethernet
  packets.push(header);
  for (const { rtp: body, tUs } of rtpPackets) {
    const rtp = body.subarray(0, 12);
    const payload = body.subarray(12);
    const udpLen = 8 + rtp.length + payload.length;
    const udp = Buffer.alloc(8);
    udp.writeUInt16BE(6000, 0);
    udp.writeUInt16BE(6000, 2);
    udp.writeUInt16BE(udpLen, 4);
    const ip = Buffer.alloc(20);
    ip[0] = 0x45;
    ip.writeUInt16BE(20 + udpLen, 2);
    ip[8] = 64;
    ip[9] = 17;
    ip.writeUInt32BE(0x7f000001, 12);
    ip.writeUInt32BE(0x7f000001, 16);
    let sum = 0;
    for (let j = 0; j < 20; j += 2) sum += ip.readUInt16BE(j);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    ip.writeUInt16BE(~sum & 0xffff, 10);
    const eth = Buffer.alloc(14);
    eth.writeUInt16BE(0x0800, 12);
    const pkt = Buffer.concat([eth, ip, udp, rtp, payload]);
    const rec = Buffer.alloc(16);
    rec.writeUInt32LE(Math.floor(tUs / 1e6), 0);
    rec.writeUInt32LE(tUs % 1e6, 4);
    rec.writeUInt32LE(pkt.length, 8);
    rec.writeUInt32LE(pkt.length, 12);
    packets.push(rec, pkt);
  }
  writeFileSync(file, Buffer.concat(packets));
}

/** Speech as 8 kHz µ-law, by espeak-ng and sox (both Debian packages of `make setup`). */
export function speakUlaw(text: string, dir: string): Buffer {
  const wav = path.join(dir, 'phrase.wav');
  const raw = path.join(dir, 'phrase.ul');
  execFileSync(binary('espeak-ng'), ['-v', 'en-us', '-s', '150', '-w', wav, text], { stdio: 'pipe' });
  execFileSync(binary('sox'), [wav, '-r', '8000', '-c', '1', '-e', 'u-law', '-t', 'raw', raw], { stdio: 'pipe' });
  return readFileSync(raw);
}

/**
 * The phone's scenario and audio in `dir` (each file made once): the phrase after `speakAfterMs`, the
 * phrase after 1.5 s (barge-in), silence for the holding numbers, the agent's words, and the answering
 * machines' and people's answers (AMD_ANSWERS). `mediaDir` is where sipp will read the audio (another
 * path when the files are copied into an image). Returns the scenario's path.
 */
export function writePhoneFiles(dir: string, phrase: string, speakAfterMs: number, mediaDir = dir): string {
  const keyFiles = [0, 1].flatMap((parity) => Object.keys(KEY_FILES).map((key) => ({ parity, key, file: keyPcapName(parity, key) })));
  for (const k of keyFiles) if (!existsSync(path.join(dir, k.file))) writeKeyPcap(path.join(dir, k.file), k.key, k.parity);
  let ulaw: Buffer | undefined;
  const spoken = () => (ulaw ??= speakUlaw(phrase, dir));
  const files = {
    pcap: { file: 'phrase.pcap', write: (f: string) => writeRtpPcap(f, spoken(), speakAfterMs, 60_000) },
    earlyPcap: { file: 'phrase-early.pcap', write: (f: string) => writeRtpPcap(f, spoken(), 1500, 60_000) },
    // A silent line still sends RTP (livekit-sip hangs up on a line that sends nothing).
    silencePcap: { file: 'silence.pcap', write: (f: string) => writeRtpPcap(f, Buffer.alloc(0), 0, (MAX_HOLD_SECONDS + 5) * 1000) },
    agentPcap: { file: 'agent.pcap', write: (f: string) => writeRtpPcap(f, speakUlaw(AGENT_PHRASE, dir), AGENT_SPEAKS_AFTER_MS, AGENT_STAYS_MS + 5000) },
  };
  for (const { file, write } of Object.values(files)) if (!existsSync(path.join(dir, file))) write(path.join(dir, file));
  writeAmdPcaps(dir, (file, ulaw) => writeRtpPcap(file, ulaw, 0, (ulaw.length / 8000) * 1000));
  const scenario = path.join(dir, 'phone.xml');
  const at = (f: string) => path.join(mediaDir, f);
  writeFileSync(scenario, phoneScenario({
    pcap: at(files.pcap.file),
    earlyPcap: at(files.earlyPcap.file),
    silencePcap: at(files.silencePcap.file),
    agentPcap: at(files.agentPcap.file),
    keyPcap: (parity, key) => at(keyPcapName(parity, key)),
    amdPcap: (a) => at(amdPcapName(a)),
  }));
  return scenario;
}

/** One REFER the phone received: its call's SIP Call-ID and its Refer-To as livekit-sip sent it (`tel:…` bare, a sip: URI as `<sip:…>`). */
export interface PhoneRefer {
  callId: string;
  referTo: string;
}

/** A phone's refer.log (`SIP_PHONE_REFER_LOG`, Phone.referLog) read: empty before the first REFER. */
export function readRefers(file: string): PhoneRefer[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
    const space = l.indexOf(' ');
    return space < 0 ? { callId: l, referTo: '' } : { callId: l.slice(0, space), referTo: l.slice(space + 1) };
  });
}

export interface PhoneOptions extends Opts {
  /** What the phone says once it answered (after `speakAfterMs`). */
  phrase?: string;
  speakAfterMs?: number;
}

/** The voicemail recorder the phone starts beside sipp (plain Node: it runs without a build). */
const RECORDER_SCRIPT = path.join(repoRoot, 'tests', 'infra', 'phone-recorder.mjs');

/**
 * The local test phone: sipp as a SIP user agent server on loopback, and its voicemail recorder
 * (phone-recorder.mjs). Ports: [sip, media, control, ear, recorder].
 */
export class Phone extends Procs {
  readonly name = 'phone' as const;
  env: Record<string, string> = {};
  sipPort = 0;
  private mediaPort = 0;
  private controlPort = 0;
  /** Where the listening and agent numbers have the call's audio sent (a test's PhoneEar binds it). */
  private earPort = 0;
  readonly messageLog: string;
  /** One line per REFER the phone received (`<Call-ID> <Refer-To>`), in its run folder; absent until the first. */
  readonly referLog: string;
  /** Where the answering machines (+15005558NNN) send what they hear: the recorder's UDP port. */
  private recorderPort = 0;
  /** What the answering machines recorded, one WAV per call, and calls.log (voicemail.ts); in the run folder. */
  readonly voicemailDir: string;
  static readonly defaultPhrase = 'yes i will pay';

  private constructor(private readonly popts: PhoneOptions) {
    super(popts);
    this.messageLog = path.join(popts.dir, 'messages.log');
    this.referLog = path.join(popts.dir, 'refer.log');
    this.voicemailDir = path.join(popts.dir, 'voicemail');
  }

  /** What the answering machine at `number` recorded on the last call to it (null before its first call). */
  voicemail(number: string): Voicemail | null {
    return readVoicemail(this.voicemailDir, number);
  }

  /** The transfers the phone was asked for, accepted or refused, in the order they came. */
  refers(): PhoneRefer[] {
    return readRefers(this.referLog);
  }

  static async create(opts: PhoneOptions): Promise<Phone> {
    const svc = new Phone(opts);
    [svc.sipPort, svc.mediaPort, svc.controlPort, svc.earPort, svc.recorderPort] = await pick(opts, 5);
    svc.env = {
      SIP_PHONE_ADDRESS: `127.0.0.1:${svc.sipPort}`,
      SIP_PHONE_MESSAGES: svc.messageLog,
      SIP_PHONE_EAR_PORT: String(svc.earPort),
      SIP_PHONE_REFER_LOG: svc.referLog,
      SIP_PHONE_VOICEMAIL_DIR: svc.voicemailDir,
    };
    return svc;
  }

  async start(): Promise<void> {
    const dir = this.opts.dir;
    const scenario = writePhoneFiles(dir, this.popts.phrase ?? Phone.defaultPhrase, this.popts.speakAfterMs ?? 5000);
    mkdirSync(this.voicemailDir, { recursive: true });
    const recorder = this.launch('phone-recorder', process.execPath, [RECORDER_SCRIPT], {
      PHONE_RECORDER_PORT: String(this.recorderPort),
      PHONE_VOICEMAIL_DIR: this.voicemailDir,
    });
    await waitUntil(() => udpBound(this.recorderPort), { what: 'phone-recorder', proc: recorder, timeoutMs: 15_000 });
    const proc = this.launch('sipp', binary('sipp'), [
      '-sf', scenario,
      ...sippLoopback(this.sipPort, this.mediaPort, this.controlPort),
      '-key', 'ear_port', String(this.earPort),
      '-key', 'refer_log', this.referLog,
      '-key', 'recorder_port', String(this.recorderPort),
      '-key', 'voicemail_dir', this.voicemailDir,
      ...sippTraces(this.messageLog, path.join(dir, 'errors.log')),
      '-fd', '3600',
      // An unexpected BYE (the bot hanging up while the phone still talks) ends the call normally.
      '-default_behaviors', 'all',
    ]);
    // sipp answers OPTIONS with its default behaviour; readiness = its SIP socket is bound.
    await waitUntil(() => existsSync(this.messageLog) || udpBound(this.sipPort), { what: 'sipp', proc, timeoutMs: 15_000 });
  }
}

/** True when something listens on this UDP port on loopback (from /proc/net/udp). */
function udpBound(port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  try {
    return readFileSync('/proc/net/udp', 'utf8').split('\n').some((l) => l.includes(`:${hex} `) && l.trim().split(/\s+/)[1]?.endsWith(`:${hex}`));
  } catch {
    return false;
  }
}

/** What a caller (sipp as a user agent client) heard from an inbound call. */
export interface InboundCallResult {
  /** The INVITE's final response: 200 (answered), 486 (busy), … */
  finalStatus: number | null;
  /** The other side (the bot) hung up: sipp received a BYE. */
  byeReceived: boolean;
  /** sipp's exit code (0: the scenario ran to its end). */
  exitCode: number | string;
  /** Every SIP message sipp sent and received. */
  messages: string;
}

/** The caller's scenario: INVITE, provisional answers, then 200 (ACK, speak, wait for the BYE) or 486 (ACK). */
function callerScenario(pcap: string, from: string, holdMs: number): string {
  const sdp = audioSdp('caller');
  const headers = (method: string, cseq: number, uri: string) => `${method} ${uri} SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: <sip:${from}@[local_ip]:[local_port]>;tag=[pid]caller[call_number]
      To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: ${cseq} ${method}
      Contact: <sip:caller@[local_ip]:[local_port];transport=[transport]>
      Max-Forwards: 70`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<scenario name="voice-platform inbound caller">
  <send retrans="500">
    <![CDATA[
      ${headers('INVITE', 1, 'sip:[service]@[remote_ip]:[remote_port]')}
      Content-Type: application/sdp
      Content-Length: [len]

      ${sdp}
    ]]>
  </send>
  <label id="wait"/>
  <recv response="100" optional="true" next="wait"/>
  <recv response="180" optional="true" next="wait"/>
  <recv response="183" optional="true" next="wait"/>
  <recv response="486" optional="true" next="busy"/>
  <recv response="200" rrs="true"/>
  <send>
    <![CDATA[
      ${headers('ACK', 1, '[next_url]')}
      Content-Length: 0
    ]]>
  </send>
  <nop>
    <action>
      <exec play_pcap_audio="${pcap}"/>
    </action>
  </nop>
  <recv request="BYE" timeout="${holdMs}" ontimeout="hangup"/>
  <send>
    <![CDATA[
      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:caller@[local_ip]:[local_port];transport=[transport]>
      Content-Length: 0
    ]]>
  </send>
  <nop next="end"/>

  <label id="hangup"/>
${hangUp(headers('BYE', 2, '[next_url]'))}

  <label id="busy"/>
  <send>
    <![CDATA[
      ${headers('ACK', 1, 'sip:[service]@[remote_ip]:[remote_port]')}
      Content-Length: 0
    ]]>
  </send>
  <label id="end"/>
</scenario>
`;
}

/**
 * One call from a phone to `number` through livekit-sip at `sipAddress` (sipp as the caller): once
 * answered it says `phrase` after `speakAfterMs` and stays on until the other side hangs up, or hangs
 * up itself after `holdMs`. Resolves when sipp is done.
 */
export async function callInbound(opts: {
  dir: string;
  sipAddress: string;
  number: string;
  from: string;
  /** What the caller says; null: a caller who stays silent (still sending RTP). */
  phrase: string | null;
  speakAfterMs?: number;
  holdMs?: number;
}): Promise<InboundCallResult> {
  mkdirSync(opts.dir, { recursive: true });
  const holdMs = opts.holdMs ?? 30_000;
  const pcap = path.join(opts.dir, 'caller.pcap');
  writeRtpPcap(pcap, opts.phrase === null ? Buffer.alloc(0) : speakUlaw(opts.phrase, opts.dir), opts.speakAfterMs ?? 4000, holdMs + 5000);
  const scenario = path.join(opts.dir, 'caller.xml');
  writeFileSync(scenario, callerScenario(pcap, opts.from, holdMs));
  const messages = path.join(opts.dir, 'caller-messages.log');
  const [sipPort, mediaPort, controlPort] = [await freePort(), await freePort(), await freePort()];
  const proc = startProcess('sipp-caller', binary('sipp'), [
    '-sf', scenario,
    '-s', opts.number,
    ...sippLoopback(sipPort, mediaPort, controlPort),
    '-m', '1',
    ...sippTraces(messages, path.join(opts.dir, 'caller-errors.log')),
    opts.sipAddress,
  ], { logFile: path.join(opts.dir, 'caller.log') });
  const exitCode = await proc.exited;
  const log = existsSync(messages) ? readFileSync(messages, 'utf8') : '';
  // sipp's trace: blocks opened by a dashed line, then "UDP message received …" or "… sent …", then the message.
  const received = log.split(/^-{5,}.*$/m).filter((b) => /message received/.test(b)).map((b) => b.slice(b.indexOf('\n', b.indexOf('message received')) + 1).trim());
  const finals = received.filter((m) => /^CSeq: *\d+ INVITE/im.test(m)).map((m) => /^SIP\/2\.0 ([2-6]\d\d)/.exec(m)?.[1]).filter((c): c is string => !!c);
  return {
    finalStatus: finals.length ? Number(finals[finals.length - 1]) : null,
    byeReceived: received.some((m) => m.startsWith('BYE ')),
    exitCode,
    messages: log,
  };
}
