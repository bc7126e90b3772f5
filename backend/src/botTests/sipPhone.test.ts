// The simulated phone on real UDP sockets, with this test as livekit-sip's side of the dialog: what it answers to
// INVITEs (404 for a number no case expects, 488 without PCMU, 200 with an SDP answer resent until the ACK), its
// RTP (µ-law in 20 ms packets, RFC 4733 keys), and BYE both ways. The whole path through livekit-sip and a voice
// worker is in worker/src/botTests.test.ts.
import dgram from 'node:dgram';
import { once } from 'node:events';
import { linearToUlaw } from '@voice-platform/schemas/node';
import { ownAddress, parseSdpOffer, parseSipMessage, SimulatedPhone, type PhoneCall } from './sipPhone.js';

let phone: SimulatedPhone;
let far: dgram.Socket; // livekit-sip's SIP socket
let media: dgram.Socket; // livekit-sip's RTP socket
const inbox: Array<ReturnType<typeof parseSipMessage>> = [];
const rtpIn: Buffer[] = [];

beforeAll(async () => {
  phone = new SimulatedPhone({ host: '127.0.0.1', port: 0 });
  await phone.start();
  far = dgram.createSocket('udp4');
  far.on('message', (m) => inbox.push(parseSipMessage(m)));
  far.bind(0, '127.0.0.1');
  media = dgram.createSocket('udp4');
  media.on('message', (m) => rtpIn.push(m));
  media.bind(0, '127.0.0.1');
  await Promise.all([once(far, 'listening'), once(media, 'listening')]);
});
afterAll(async () => {
  await phone.stop();
  far.close();
  media.close();
});

async function until<T>(fn: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const offer = (pts: string) =>
  ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=LiveKit', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${media.address().port} RTP/AVP ${pts}`, 'a=rtpmap:0 PCMU/8000', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:101 telephone-event/8000', ''].join('\r\n');

function send(lines: string[], body = ''): void {
  far.send(Buffer.from(`${lines.join('\r\n')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`), phone.port, '127.0.0.1');
}
function invite(number: string, callId: string, sdp: string): void {
  const me = `127.0.0.1:${far.address().port}`;
  send([`INVITE sip:${number}@${phone.address} SIP/2.0`, `Via: SIP/2.0/UDP ${me};branch=z9hG4bK-${callId}`, `From: <sip:+15550100999@${me}>;tag=lk1`, `To: <sip:${number}@${phone.address}>`, `Call-ID: ${callId}`, 'CSeq: 1 INVITE', `Contact: <sip:livekit@${me}>`, 'Content-Type: application/sdp'], sdp);
}
const answers = (callId: string) => inbox.filter((m) => m && m.status !== null && m.headers.some(([k, v]) => k === 'call-id' && v === callId));
const header = (m: NonNullable<ReturnType<typeof parseSipMessage>>, name: string) => m.headers.find(([k]) => k === name)?.[1];

describe('the SDP offer', () => {
  it("reads the far end's media address and its telephone-event payload type; no PCMU: null", () => {
    expect(parseSdpOffer(offer('0 8 101'))).toEqual({ host: '127.0.0.1', port: media.address().port, dtmfPt: 101 });
    expect(parseSdpOffer(offer('8'))).toBeNull();
  });
});

describe("the phone's address", () => {
  it("of a name every replica shares (compose's service name), each replica takes its own; none of them local: the first", async () => {
    expect(ownAddress(['172.18.0.4', '172.18.0.7', '172.18.0.9'], new Set(['127.0.0.1', '172.18.0.7']))).toBe('172.18.0.7');
    expect(ownAddress(['10.0.0.2', '10.0.0.3'], new Set(['127.0.0.1']))).toBe('10.0.0.2');
    expect(() => ownAddress([], new Set())).toThrow('resolves to no IPv4 address');
    // A name of this machine's: the phone binds and advertises the address it resolves to here.
    const phone = new SimulatedPhone({ host: 'localhost', port: 0 });
    await phone.start();
    try {
      expect(phone.address).toMatch(/^127\.0\.0\.1:\d+$/);
    } finally {
      await phone.stop();
    }
  });
});

describe('the phone as a callee', () => {
  it('a number no case expects: 404; an offer without PCMU: 488 (the number is still expected after)', async () => {
    invite('+15550000001', 'nobody', offer('0 101'));
    expect((await until(() => answers('nobody')[0], 'the 404'))!.status).toBe(404);
    const expected = phone.expect('+15550000002');
    invite('+15550000002', 'pcma-only', offer('8'));
    expect((await until(() => answers('pcma-only')[0], 'the 488'))!.status).toBe(488);
    expected.cancel();
  });

  let call: PhoneCall;
  it('answers an expected number with 200 and an SDP answer, resends it until the ACK, then the call is answered', async () => {
    const expected = phone.expect('+15550000003');
    invite('+15550000003', 'c3', offer('0 8 101'));
    const ok = await until(() => answers('c3').find((m) => m!.status === 200), 'the 200');
    expect(header(ok!, 'to')).toMatch(/^<sip:\+15550000003@127\.0\.0\.1:\d+>;tag=[0-9a-f]{16}$/);
    expect(header(ok!, 'contact')).toBe(`<sip:phone@${phone.address}>`);
    expect(header(ok!, 'content-type')).toBe('application/sdp');
    const sdp = ok!.body.toString();
    expect(sdp).toMatch(/^m=audio \d+ RTP\/AVP 0 101\r$/m);
    expect(sdp).toContain('a=rtpmap:101 telephone-event/8000');
    // No ACK yet: the 200 comes again (T1 = 500 ms).
    await until(() => (answers('c3').filter((m) => m!.status === 200).length >= 2 ? true : undefined), 'a resent 200');
    const me = `127.0.0.1:${far.address().port}`;
    send([`ACK sip:phone@${phone.address} SIP/2.0`, `Via: SIP/2.0/UDP ${me};branch=z9hG4bK-ack3`, `From: <sip:+15550100999@${me}>;tag=lk1`, `To: ${header(ok!, 'to')}`, 'Call-ID: c3', 'CSeq: 1 ACK']);
    call = await expected.answered;
    expect(call.ended).toBe(false);

    // Its media: the caller's 8 kHz frame goes out as one 160-byte µ-law packet (PT 0) to the offered port.
    const phonePort = Number(/^m=audio (\d+)/m.exec(sdp)![1]);
    const frame = Buffer.alloc(320);
    for (let i = 0; i < 160; i++) frame.writeInt16LE(i % 2 ? 8000 : -8000, 2 * i);
    rtpIn.length = 0;
    call.sendFrame(frame);
    const pkt = await until(() => rtpIn[0], 'an RTP packet');
    expect(pkt.length).toBe(12 + 160);
    expect(pkt[0]).toBe(0x80);
    expect(pkt[1]! & 0x7f).toBe(0);
    expect([pkt[12], pkt[13]]).toEqual([linearToUlaw(-8000), linearToUlaw(8000)]);
    // The far end's loud packet reaches the caller as its peak.
    const peaks: number[] = [];
    call.onAudio = (p) => peaks.push(p);
    const head = Buffer.from([0x80, 0, 0, 1, 0, 0, 0, 160, 0, 0, 0, 7]);
    media.send(Buffer.concat([head, Buffer.alloc(160, linearToUlaw(10_000))]), phonePort, '127.0.0.1');
    expect(await until(() => peaks[0], 'a heard packet')).toBeGreaterThan(9000);

    // A key: RFC 4733 events (PT 101), the first marked, the last three with the end bit, one timestamp.
    rtpIn.length = 0;
    await call.dtmf('7');
    const events = rtpIn.filter((p) => (p[1]! & 0x7f) === 101);
    expect(events.length).toBe(8);
    expect(events.every((p) => p[12] === 7)).toBe(true);
    expect(events[0]![1]! & 0x80).toBe(0x80);
    expect(events.slice(-3).every((p) => (p[13]! & 0x80) === 0x80)).toBe(true);
    expect(new Set(events.map((p) => p.readUInt32BE(4))).size).toBe(1);
  });

  it("the far end's BYE: 200 and the call ends; a BYE for no dialog: 481", async () => {
    const ended = new Promise<void>((r) => (call.onEnded = r));
    const me = `127.0.0.1:${far.address().port}`;
    const bye = (callId: string) => send([`BYE sip:phone@${phone.address} SIP/2.0`, `Via: SIP/2.0/UDP ${me};branch=z9hG4bK-bye-${callId}`, `From: <sip:+15550100999@${me}>;tag=lk1`, `To: <sip:+15550000003@${phone.address}>;tag=x`, `Call-ID: ${callId}`, 'CSeq: 2 BYE']);
    bye('c3');
    await ended;
    expect(call.ended).toBe(true);
    expect(await until(() => answers('c3').find((m) => header(m!, 'cseq') === '2 BYE'), 'the 200 to BYE')).toMatchObject({ status: 200 });
    bye('c3');
    expect(await until(() => answers('c3').filter((m) => header(m!, 'cseq') === '2 BYE')[1], 'the 481')).toMatchObject({ status: 481 });
  });

  it("the caller hangs up: a BYE in the dialog to the INVITE's Contact, done once it is answered", async () => {
    const expected = phone.expect('+15550000004');
    invite('+15550000004', 'c4', offer('0 101'));
    const ok = await until(() => answers('c4').find((m) => m!.status === 200), 'the 200');
    const me = `127.0.0.1:${far.address().port}`;
    send([`ACK sip:phone@${phone.address} SIP/2.0`, `Via: SIP/2.0/UDP ${me};branch=z9hG4bK-ack4`, `From: <sip:+15550100999@${me}>;tag=lk1`, `To: ${header(ok!, 'to')}`, 'Call-ID: c4', 'CSeq: 1 ACK']);
    const c = await expected.answered;
    const hungUp = c.hangUp();
    const bye = await until(() => inbox.find((m) => m?.method === 'BYE' && header(m, 'call-id') === 'c4'), 'the BYE');
    expect(bye!.uri).toBe(`sip:livekit@${me}`);
    expect(header(bye!, 'from')).toBe(header(ok!, 'to')); // our To with our tag
    expect(header(bye!, 'to')).toBe(`<sip:+15550100999@${me}>;tag=lk1`);
    const via = header(bye!, 'via')!;
    far.send(Buffer.from(`SIP/2.0 200 OK\r\nVia: ${via}\r\nFrom: ${header(bye!, 'from')}\r\nTo: ${header(bye!, 'to')}\r\nCall-ID: c4\r\nCSeq: ${header(bye!, 'cseq')}\r\nContent-Length: 0\r\n\r\n`), phone.port, '127.0.0.1');
    await hungUp;
    expect(c.ended).toBe(true);
    expect(inbox.filter((m) => m?.method === 'BYE' && header(m, 'call-id') === 'c4')).toHaveLength(1); // answered: not resent
  });
});
