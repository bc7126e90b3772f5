// The telephony plane on LiveKit (docs/design.md §7): one room per call, named by its call id. The worker
// joins the room with rtc-node and publishes the bot's voice, then asks LiveKit to dial the callee
// into the room through the call's outbound trunk (livekit-sip places the SIP call). The callee's
// audio comes back as a track; the call itself runs on the same pipeline as a WebSocket call, through
// LiveKitTransport. Deleting the room is how a call ends: LiveKit removes the SIP participant, which
// sends the BYE (or the CANCEL while it still rings).
import {
  AudioFrame,
  AudioSource,
  AudioStream,
  LocalAudioTrack,
  ParticipantKind,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
  type RemoteTrack,
} from '@livekit/rtc-node';
import { AccessToken, RoomServiceClient, SipClient } from 'livekit-server-sdk';
import type { Logger } from '../core/logger.js';
import type { Settings } from '../core/settings.js';
import { RoomEventRouter } from './roomEvents.js';
import { RtcCapture } from './rtcCapture.js';
import {
  DialError,
  DTMF_EVENT_CODES,
  outcomeForSipStatus,
  type CallTransport,
  type DialRequest,
  type InboundCallRequest,
  type TelephonyDialer,
  type TransferOutcome,
  type TransferRequest,
  type TransportHandlers,
  type WebCallRequest,
} from './transport.js';
import type { ServerMessage } from '../pipeline/frames.js';

export interface LiveKitOptions {
  url: string;
  apiKey: string;
  apiSecret: string;
  sampleRate: number;
  ringingTimeoutSeconds: number;
  workerId: string;
  logger: Logger;
}

const BOT_IDENTITY = 'bot';
const CALLEE_IDENTITY = 'callee';
/** The person a warm transfer dials (docs/design.md §9), in the consult room and then in the caller's. */
const AGENT_IDENTITY = 'agent';
/** How long a warm transfer's person may ring before the transfer fails (no answer). */
const AGENT_RINGING_TIMEOUT_S = 30;
/** How long livekit-sip may take to subscribe a caller's line to a new track of the bot's (its first subscriber). */
const CALLER_SUBSCRIBES_WITHIN_MS = 3000;
/** A cold transfer's REFER: the phone network's answer (the NOTIFY) comes within this long, or it failed. */
const REFER_TIMEOUT_S = 30;
/** The identity the backend gives a browser caller's token (docs/design.md §7 widget). */
export const WEB_CALLER_IDENTITY = 'caller';

/** Who the call is with in the room, and what their leaving is called. */
interface Peer {
  /** The peer's identity; null: whoever joins as a SIP participant (an inbound caller, named by LiveKit). */
  identity: string | null;
  /** The peer is a phone line (livekit-sip), not a browser. */
  sip: boolean;
  hangupReason: 'callee_hangup' | 'caller_hangup';
}
const SIP_CALLEE: Peer = { identity: CALLEE_IDENTITY, sip: true, hangupReason: 'callee_hangup' };
const SIP_CALLER: Peer = { identity: null, sip: true, hangupReason: 'caller_hangup' };
const WEB_CALLER: Peer = { identity: WEB_CALLER_IDENTITY, sip: false, hangupReason: 'caller_hangup' };

const isPeer = (peer: Peer, p: { identity: string; kind?: ParticipantKind }) => (peer.identity === null ? p.kind === ParticipantKind.SIP && p.identity !== AGENT_IDENTITY : p.identity === peer.identity);

const SIP_STATUS_ATTRIBUTE = 'sip.callStatus';

/** The SIP status of a failed createSipParticipant/transferSipParticipant (livekit-server-sdk SipCallError), if it carries one. */
function sipStatusOf(err: unknown): number | null {
  const e = err as { sipStatusCode?: number; metadata?: Record<string, string> };
  const raw = e.sipStatusCode ?? Number(e.metadata?.sip_status_code ?? NaN);
  return Number.isInteger(raw) && raw >= 100 && raw <= 699 ? raw : null;
}
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
/** send_dtmf: one key every this many ms (docs/design.md §9). */
export const DTMF_KEY_INTERVAL_MS = 250;
/**
 * What livekit-sip v1.8 takes to play one key on the line: the event for 250 ms, then 250 ms of pause
 * (media-sdk dtmf.Write), one key after the other. send_dtmf returns once the line has carried them all,
 * so a hang-up right after never cuts the last keys off.
 */
const LINE_KEY_MS = 520;

/** The dialer a worker's settings describe; null without all three LIVEKIT_* settings. */
export function liveKitDialerFromSettings(
  s: Pick<Settings, 'LIVEKIT_URL' | 'LIVEKIT_API_KEY' | 'LIVEKIT_API_SECRET' | 'AUDIO_SAMPLE_RATE' | 'RINGING_TIMEOUT_SECONDS' | 'WORKER_ID'>,
  logger: Logger,
): LiveKitDialer | null {
  if (!s.LIVEKIT_URL || !s.LIVEKIT_API_KEY || !s.LIVEKIT_API_SECRET) return null;
  return new LiveKitDialer({
    url: s.LIVEKIT_URL,
    apiKey: s.LIVEKIT_API_KEY,
    apiSecret: s.LIVEKIT_API_SECRET,
    sampleRate: s.AUDIO_SAMPLE_RATE,
    ringingTimeoutSeconds: s.RINGING_TIMEOUT_SECONDS,
    workerId: s.WORKER_ID,
    logger,
  });
}

export class LiveKitDialer implements TelephonyDialer {
  readonly name = 'livekit';
  private readonly rooms: RoomServiceClient;
  private readonly sip: SipClient;
  /** Room joins one at a time: rtc-node 1.1 loses handles when many connect at once (see connect). */
  private joining: Promise<unknown> = Promise.resolve();
  /** Each room gets only its own FFI events (see roomEvents.ts). */
  readonly router = new RoomEventRouter();

  constructor(private readonly opts: LiveKitOptions) {
    const host = opts.url.replace(/^ws/, 'http');
    this.rooms = new RoomServiceClient(host, opts.apiKey, opts.apiSecret);
    this.sip = new SipClient(host, opts.apiKey, opts.apiSecret);
  }

  private async token(room: string): Promise<string> {
    const at = new AccessToken(this.opts.apiKey, this.opts.apiSecret, { identity: BOT_IDENTITY, name: 'voice bot', ttl: '6h', attributes: { 'vp.worker_id': this.opts.workerId } });
    at.addGrant({ room, roomJoin: true, canPublish: true, canSubscribe: true, canPublishData: true });
    return at.toJwt();
  }

  /**
   * Joins the room. rtc-node 1.1 sometimes loses the connect's own handle when rooms connect at once on
   * a loaded machine ("handle not found" on ReadyForRoomEvent): joins are serialised (one takes tens of
   * milliseconds), and a failed one is tried once more.
   */
  private async connect(room: Room, name: string, log: Logger): Promise<void> {
    const turn = this.joining.then(() => this.join(room, name, log));
    this.joining = turn.catch(() => undefined);
    return turn;
  }

  private async join(room: Room, name: string, log: Logger): Promise<void> {
    const token = await this.token(name);
    try {
      await room.connect(this.opts.url, token, { autoSubscribe: true, dynacast: false });
    } catch (err) {
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'joining the room failed; retrying once');
      await room.disconnect().catch(() => undefined);
      await room.connect(this.opts.url, token, { autoSubscribe: true, dynacast: false });
    }
    this.router.adopt(room);
  }

  /** Deletes a call's room (hangs up everyone in it); one already gone is fine. */
  async deleteRoom(name: string): Promise<void> {
    try {
      await this.rooms.deleteRoom(name);
    } catch (err) {
      if ((err as { status?: number }).status !== 404) throw err;
    }
  }

  /**
   * The call's room with the bot in it, speaking on its own track, and the transport for the call with
   * `peer`: built before the peer comes, whose track and hang-up may arrive at any moment after.
   */
  private async openRoom(roomName: string, peer: Peer, log: Logger, line: CallLine | null = null): Promise<{ room: Room; transport: LiveKitTransport; cleanup: () => Promise<void> }> {
    const room = new Room();
    // No queue in rtc-node: the output processor already paces the bot's audio in real time. A queued
    // source feeds the Opus encoder 10 ms of silence whenever it runs dry, so every call would encode all
    // the time; unqueued, the encoder (and the RTP stream) runs only while the bot speaks.
    const source = new AudioSource(this.opts.sampleRate, 1, 0);
    let cleaned = false;
    // `keepRoom`: the call was handed to a person (warm transfer) who talks on in the room after the bot left.
    const cleanup = async (keepRoom = false) => {
      if (cleaned) return;
      cleaned = true;
      if (!keepRoom) await this.deleteRoom(roomName).catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not delete the room'));
      await room.disconnect().catch(() => undefined);
      this.router.drop(room);
      await source.close().catch(() => undefined);
    };
    try {
      await this.connect(room, roomName, log);
      const track = LocalAudioTrack.createAudioTrack('bot-voice', source);
      // DTX and no RED: the bot is silent half the call, and a phone line has no use for redundancy.
      await room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE, dtx: true, red: false }));
    } catch (err) {
      await cleanup();
      throw err;
    }
    const handOver = peer.sip ? (req: TransferRequest, identity: string) => this.transfer(room, identity, req, line, log) : null;
    return { room, transport: new LiveKitTransport(room, source, this.opts.sampleRate, cleanup, log, this.router, peer, handOver), cleanup: () => cleanup() };
  }

  /**
   * A browser test call (docs/design.md §7 widget): joins the call's room and resolves once the caller is in it
   * with their microphone, with the transport the call runs on. Rejects (room deleted) when the caller
   * does not come before `req.signal` aborts, or LiveKit is unreachable.
   */
  async joinWebCall(req: WebCallRequest): Promise<LiveKitTransport> {
    const log = this.opts.logger.child({ call_id: req.callId });
    const { transport, cleanup } = await this.openRoom(req.callId, WEB_CALLER, log);
    try {
      await Promise.race([
        transport.peerAudio,
        new Promise<never>((_, reject) => {
          const onAbort = () => reject(new Error('the caller did not join'));
          if (req.signal.aborted) onAbort();
          req.signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
      return transport;
    } catch (err) {
      await cleanup();
      throw err;
    }
  }

  /**
   * An inbound call (docs/design.md §7): joins the room the caller rings in. Subscribing to the caller's audio is
   * what makes livekit-sip answer (200 OK); resolves once it has (`sip.callStatus` active), with the
   * transport the call runs on. Rejects (room deleted, the caller hears 486 or a BYE) when the caller is
   * gone, or answering takes longer than `req.signal` allows.
   */
  async answerInbound(req: InboundCallRequest): Promise<LiveKitTransport> {
    const log = this.opts.logger.child({ call_id: req.callId, room: req.roomName });
    const { room, transport, cleanup } = await this.openRoom(req.roomName, SIP_CALLER, log);
    const caller = () => [...room.remoteParticipants.values()].find((p) => p.kind === ParticipantKind.SIP);
    let onAttributes: ((changed: Record<string, string>, p: { identity: string; kind?: ParticipantKind }) => void) | null = null;
    try {
      await Promise.race([
        new Promise<void>((resolve) => {
          onAttributes = (changed, p) => {
            if (p.kind === ParticipantKind.SIP && changed[SIP_STATUS_ATTRIBUTE] === 'active') resolve();
          };
          room.on(RoomEvent.ParticipantAttributesChanged, onAttributes);
          if (caller()?.attributes[SIP_STATUS_ATTRIBUTE] === 'active') resolve();
        }),
        transport.hungUpWith.then((reason) => Promise.reject(new Error(`the caller was gone before the answer (${reason})`))),
        new Promise<never>((_, reject) => {
          const onAbort = () => reject(new Error(caller() ? 'the call was not answered in time' : 'the caller was not in the room'));
          if (req.signal.aborted) onAbort();
          req.signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
      log.info('inbound call answered');
      return transport;
    } catch (err) {
      await cleanup();
      throw err;
    } finally {
      if (onAttributes) room.off(RoomEvent.ParticipantAttributesChanged, onAttributes);
    }
  }

  /**
   * Joins the call's room, dials the callee into it, and resolves once the callee answered, with the
   * transport the call runs on. Anything else rejects with a DialError (the room is deleted first).
   */
  async dial(req: DialRequest): Promise<LiveKitTransport> {
    const log = this.opts.logger.child({ call_id: req.callId });
    let cleanup: () => Promise<void> = async () => undefined;
    try {
      const opened = await this.openRoom(req.callId, SIP_CALLEE, log, { trunkId: req.sipTrunkId, fromNumber: req.fromNumber });
      const { room, transport } = opened;
      cleanup = opened.cleanup;

      // livekit-sip reports progress in the callee participant's `sip.callStatus` attribute.
      let ringing = false;
      let markActive!: () => void;
      const active = new Promise<void>((resolve) => (markActive = resolve));
      const onAttributes = (changed: Record<string, string>, p: { identity: string }) => {
        if (p.identity !== CALLEE_IDENTITY) return;
        const status = changed[SIP_STATUS_ATTRIBUTE];
        if (status === 'ringing' && !ringing) {
          ringing = true;
          req.onRinging();
        }
        if (status === 'active') markActive();
      };
      room.on(RoomEvent.ParticipantAttributesChanged, onAttributes);

      const aborted = new Promise<never>((_, reject) => {
        const onAbort = () => reject(new DialError({ status: 'failed', reason: 'dial_failed', sipStatusCode: null }, 'dialing was aborted'));
        if (req.signal.aborted) onAbort();
        req.signal.addEventListener('abort', onAbort, { once: true });
      });
      const created = this.sip.createSipParticipant(req.sipTrunkId, req.toNumber, req.callId, {
        participantIdentity: CALLEE_IDENTITY,
        participantName: 'callee',
        fromNumber: req.fromNumber,
        waitUntilAnswered: true,
        ringingTimeout: this.opts.ringingTimeoutSeconds,
        // The request itself outlives the ringing by a margin: LiveKit answers with the outcome.
        timeout: this.opts.ringingTimeoutSeconds + 15,
      });
      try {
        // Answered: whichever says so first, the attribute (over the room's signalling, the sooner under
        // load) or the API's reply. A failure after the answer is no longer the dial's to report.
        await Promise.race([created, active, aborted]);
        created.catch(() => undefined);
      } catch (err) {
        if (err instanceof DialError) throw err;
        // No HTTP status: LiveKit itself was not reached (handled below as dial_failed).
        if (typeof (err as { status?: unknown }).status !== 'number') throw err;
        const code = sipStatusOf(err);
        // The phone rang until the ringing timeout: nobody picked up. A SIP failure without a final
        // response (the carrier's address answers nothing) is a sip_error with no status.
        const outcome = code !== null ? outcomeForSipStatus(code) : ringing ? outcomeForSipStatus(408) : { status: 'failed' as const, reason: 'sip_error' as const, sipStatusCode: null };
        throw new DialError(outcome, `the callee was not reached (${code ?? 'no SIP status'})`);
      } finally {
        room.off(RoomEvent.ParticipantAttributesChanged, onAttributes);
      }
      log.info({ to: req.toNumber.slice(0, -4) + '****' }, 'callee answered');
      return transport;
    } catch (err) {
      await cleanup();
      if (err instanceof DialError) throw err;
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'dial failed before the SIP call');
      throw new DialError({ status: 'failed', reason: 'dial_failed', sipStatusCode: null }, 'the telephony plane is unreachable');
    }
  }
  /**
   * Hands the call's SIP peer (`identity` in `room`) to a person (docs/design.md §9 Transfer). Cold: SIP REFER
   * through livekit-sip, accepted once the phone network's NOTIFY says 200. Warm: the person is dialled
   * through the call's trunk and hears the whisper before the two are put together, then the bot leaves
   * them the room. Never throws.
   *
   * DESIGN has the person dialled into a consult room and moved (MoveParticipant), but livekit-server
   * v1.13.5 answers MoveParticipant "not implemented" (a LiveKit Cloud feature: roommanager.go). So the
   * person is dialled into the caller's room itself, and the server keeps the two apart until the whisper
   * is done (UpdateSubscriptions): the caller hears the hold tone, not the person nor the whisper; the
   * person hears the whisper, on a track of its own, not the caller nor the hold tone.
   */
  private async transfer(room: Room, identity: string, req: TransferRequest, line: CallLine | null, log: Logger): Promise<TransferOutcome> {
    const roomName = room.name ?? '';
    if (req.mode === 'cold') {
      try {
        await this.sip.transferSipParticipant(roomName, identity, req.target, { playDialtone: false, timeout: REFER_TIMEOUT_S });
        return { status: 'accepted', sipStatusCode: 202 };
      } catch (err) {
        return { status: 'failed', sipStatusCode: sipStatusOf(err), detail: errorText(err) };
      }
    }
    if (!line) return { status: 'failed', sipStatusCode: null, detail: 'the call has no outbound trunk to dial the person through' };
    const me = room.localParticipant!;
    const audioOf = (pubs: Iterable<{ kind?: TrackKind; sid?: string; name?: string }>) => [...pubs].filter((p) => p.kind === TrackKind.KIND_AUDIO).map((p) => p.sid!).filter(Boolean);
    const voice = [...me.trackPublications.values()].filter((p) => p.name === 'bot-voice').map((p) => p.sid!);
    const caller = audioOf(room.remoteParticipants.get(identity)?.trackPublications.values() ?? []);
    const source = new AudioSource(this.opts.sampleRate, 1, 1000);
    const apart = (who: string, sids: string[], subscribe: boolean) =>
      sids.length ? this.rooms.updateSubscriptions(roomName, who, sids, subscribe).catch((err: unknown) => log.warn({ err: errorText(err), subscribe }, 'could not change the subscriptions of a transfer')) : Promise.resolve();
    let agentTracks: string[] = [];
    const onJoined = (p: { identity: string }) => {
      if (p.identity === AGENT_IDENTITY) void apart(AGENT_IDENTITY, [...voice, ...caller], false);
    };
    const onPublished = (pub: { kind?: TrackKind; sid?: string }, p: { identity: string }) => {
      if (p.identity !== AGENT_IDENTITY || pub.kind !== TrackKind.KIND_AUDIO || !pub.sid) return;
      agentTracks.push(pub.sid);
      void apart(identity, [pub.sid], false);
    };
    let whisperSid: string | undefined;
    room.on(RoomEvent.ParticipantConnected, onJoined);
    room.on(RoomEvent.TrackPublished, onPublished);
    try {
      // The whisper is for the person only. livekit-sip subscribes the caller's line to every new track
      // itself, and a subscription it asks for after the server took it away would win: the caller is
      // taken off once its subscription is in (the track's first subscriber, reported to the publisher).
      const whisperTrack = LocalAudioTrack.createAudioTrack('bot-whisper', source);
      let onSubscribed: ((t: { sid?: string }) => void) | null = null;
      const callerSubscribed = new Promise<void>((resolve) => {
        onSubscribed = (t) => {
          if (t.sid && t.sid === whisperTrack.sid) resolve();
        };
        room.on(RoomEvent.LocalTrackSubscribed, onSubscribed);
      });
      try {
        const published = await me.publishTrack(whisperTrack, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE, dtx: true, red: false }));
        whisperSid = published.sid;
        await Promise.race([callerSubscribed, new Promise((resolve) => setTimeout(resolve, CALLER_SUBSCRIBES_WITHIN_MS))]);
      } finally {
        if (onSubscribed) room.off(RoomEvent.LocalTrackSubscribed, onSubscribed);
      }
      await apart(identity, whisperSid ? [whisperSid] : [], false);
      try {
        await this.sip.createSipParticipant(line.trunkId, req.number, roomName, {
          participantIdentity: AGENT_IDENTITY,
          participantName: 'agent',
          fromNumber: line.fromNumber,
          waitUntilAnswered: true,
          ringingTimeout: AGENT_RINGING_TIMEOUT_S,
          timeout: AGENT_RINGING_TIMEOUT_S + 15,
        });
      } catch (err) {
        // Busy, no answer, no such number: the caller stays with the bot.
        return { status: 'failed', sipStatusCode: sipStatusOf(err), detail: errorText(err) };
      }
      if (req.signal.aborted) return this.dropAgent(roomName, 'the call ended', log);
      // What the person's line may already carry of the call, in case it joined before these handlers saw it.
      agentTracks = [...new Set([...agentTracks, ...audioOf(room.remoteParticipants.get(AGENT_IDENTITY)?.trackPublications.values() ?? [])])];
      await Promise.all([apart(AGENT_IDENTITY, [...voice, ...caller], false), apart(identity, agentTracks, false)]);
      // The whisper, at the pace the line plays it (the source's queue holds a second), then until it is out.
      const frame = this.opts.sampleRate / 50;
      for await (const pcm of req.whisper()) {
        if (req.signal.aborted) break;
        for (let at = 0; at < pcm.length; at += frame) {
          const chunk = pcm.slice(at, Math.min(pcm.length, at + frame));
          await source.captureFrame(new AudioFrame(chunk, this.opts.sampleRate, 1, chunk.length));
        }
      }
      await source.waitForPlayout();
      if (req.signal.aborted) return this.dropAgent(roomName, 'the call ended', log);
      // Together: each hears the other from now on; the bot leaves them the room.
      await Promise.all([apart(AGENT_IDENTITY, caller, true), apart(identity, agentTracks, true)]);
      log.info('warm transfer: the person and the caller are put together');
      return { status: 'accepted', sipStatusCode: 200 };
    } catch (err) {
      return this.dropAgent(roomName, errorText(err), log);
    } finally {
      room.off(RoomEvent.ParticipantConnected, onJoined);
      room.off(RoomEvent.TrackPublished, onPublished);
      if (whisperSid) await me.unpublishTrack(whisperSid).catch(() => undefined);
      await source.close().catch(() => undefined);
    }
  }

  /** A warm transfer that cannot go on: the person's line is hung up, the caller stays with the bot. */
  private async dropAgent(roomName: string, detail: string, log: Logger): Promise<TransferOutcome> {
    await this.rooms.removeParticipant(roomName, AGENT_IDENTITY).catch((err: unknown) => {
      if ((err as { status?: number }).status !== 404) log.warn({ err: errorText(err) }, 'could not hang up the person of a failed transfer');
    });
    return { status: 'failed', sipStatusCode: null, detail };
  }
}

/** The call's outbound line (dial-outs): what a warm transfer dials the person through. */
/**
 * A bench's view of the frames crossing the transport (`npm run bench:capacity`: the media path's own delay,
 * from the phone's RTP to the worker and back). Unset in production: one null check per frame.
 */
export interface MediaProbe {
  /** `room`'s caller frame handed to the pipeline ('in') or bot audio handed to rtc-node ('out'), as it happens. */
  onFrame(room: string, direction: 'in' | 'out', pcm: Int16Array): void;
}
let mediaProbe: MediaProbe | null = null;
export function setMediaProbe(probe: MediaProbe | null): void {
  mediaProbe = probe;
}

interface CallLine {
  trunkId: string;
  fromNumber: string;
}

/** A call's audio and events over its LiveKit room: the peer's track in (a SIP callee or a browser), the bot's track out. */
export class LiveKitTransport implements CallTransport {
  readonly kind: 'sip' | 'livekit';
  private handlers: TransportHandlers | null = null;
  private hungUp: string | null = null;
  private closed = false;
  private calleeTrack: RemoteTrack | null = null;
  private stream: AudioStream | null = null;
  private gotPeerAudio!: () => void;
  /** Resolves once the peer's audio track is subscribed (a browser caller is there to talk to). */
  readonly peerAudio = new Promise<void>((resolve) => (this.gotPeerAudio = resolve));
  private releaseStream: (() => void) | null = null;
  private readonly encoder = new TextEncoder();
  private readonly capture: RtcCapture;
  private markHungUp!: (reason: string) => void;
  /** Resolves with the reason once the peer is gone (before or during the call). */
  readonly hungUpWith = new Promise<string>((resolve) => (this.markHungUp = resolve));

  /** Hands the caller to a person (a phone line's peer only: docs/design.md §9). */
  readonly transfer?: (req: TransferRequest) => Promise<TransferOutcome>;
  /** The peer talks on with a person after the bot leaves: the room stays (LiveKit closes it when the last one leaves). */
  private keepRoom = false;

  constructor(
    private readonly room: Room,
    private readonly source: AudioSource,
    private readonly sampleRate: number,
    private readonly cleanup: (keepRoom?: boolean) => Promise<void>,
    private readonly log: Logger,
    private readonly router: RoomEventRouter | null = null,
    private readonly peer: Peer = SIP_CALLEE,
    handOver: ((req: TransferRequest, identity: string) => Promise<TransferOutcome>) | null = null,
  ) {
    this.kind = peer.sip ? 'sip' : 'livekit';
    if (handOver) {
      this.transfer = async (req) => {
        const identity = peer.identity ?? [...room.remoteParticipants.values()].find((p) => p.kind === ParticipantKind.SIP)?.identity;
        if (!identity || this.closed) return { status: 'failed', sipStatusCode: null, detail: 'the caller has left' };
        const outcome = await handOver(req, identity);
        if (outcome.status === 'accepted' && req.mode === 'warm') this.keepRoom = true;
        return outcome;
      };
    }
    this.capture = new RtcCapture(source, sampleRate);
    // The peer's audio may be subscribed before or after the call starts: listen from the start.
    for (const p of room.remoteParticipants.values()) {
      for (const pub of p.trackPublications.values()) if (isPeer(peer, p) && pub.track?.kind === TrackKind.KIND_AUDIO) this.calleeTrack = pub.track;
    }
    if (this.calleeTrack) this.gotPeerAudio();
    room.on(RoomEvent.TrackSubscribed, (t, _pub, p) => {
      if (!isPeer(peer, p) || t.kind !== TrackKind.KIND_AUDIO || this.calleeTrack) return;
      this.calleeTrack = t;
      this.gotPeerAudio();
      // Not from inside rtc-node's event dispatch: a stream opened there can miss its first frames for good.
      setImmediate(() => this.listen());
    });
    room.on(RoomEvent.ParticipantDisconnected, (p) => {
      // A person a warm transfer dialled is not the caller.
      if (p.identity === AGENT_IDENTITY) return;
      if (isPeer(peer, p) || (peer.sip && p.kind === ParticipantKind.SIP)) this.hangup(peer.hangupReason);
    });
    room.on(RoomEvent.Disconnected, () => this.hangup('connection_lost'));
    // The peer's keypad: livekit-sip turns RFC 4733 events (and SIP INFO) into SipDTMF packets in the room.
    room.on(RoomEvent.DtmfReceived, (_code, digit, p) => {
      if (p.identity === AGENT_IDENTITY || (!isPeer(peer, p) && !(peer.sip && p.kind === ParticipantKind.SIP))) return;
      if (typeof digit === 'string' && /^[0-9*#]$/.test(digit)) this.handlers?.onDtmf?.(digit);
    });
  }

  /** Presses `digits` on the line, one key every DTMF_KEY_INTERVAL_MS (livekit-sip sends RFC 4733 to the phone). */
  async sendDtmf(digits: string, signal?: AbortSignal): Promise<void> {
    const started = performance.now();
    for (let i = 0; i < digits.length; i++) {
      if (this.closed || !this.room.isConnected) throw new Error('the call has ended');
      if (signal?.aborted) throw new Error('cancelled');
      const digit = digits[i]!;
      const code = DTMF_EVENT_CODES[digit];
      if (code === undefined) throw new Error(`not a key: ${digit}`);
      await this.room.localParticipant!.publishDtmf(code, digit);
      if (i < digits.length - 1) await new Promise((resolve) => setTimeout(resolve, DTMF_KEY_INTERVAL_MS));
    }
    const onLine = digits.length * LINE_KEY_MS - (performance.now() - started);
    if (onLine > 0) await new Promise((resolve) => setTimeout(resolve, onLine));
  }

  attach(handlers: TransportHandlers): void {
    this.handlers = handlers;
    if (this.hungUp) {
      handlers.onHangup(this.hungUp);
      return;
    }
    // As on TrackSubscribed: never open the stream from inside a chain rtc-node's event dispatch started.
    setImmediate(() => this.listen());
  }

  /** Starts reading the callee's audio once both the call and the track are there. */
  private listen(): void {
    if (!this.handlers || !this.calleeTrack || this.stream || this.closed) return;
    // 20 ms frames: half the FFI events of the default 10 ms, the pipeline's own frame size.
    this.stream = new AudioStream(this.calleeTrack, { sampleRate: this.sampleRate, numChannels: 1, frameSizeMs: 20 });
    this.releaseStream = this.router?.adoptStreams(this.calleeTrack) ?? null;
    void this.pump(this.stream);
  }

  private async pump(stream: AudioStream): Promise<void> {
    const reader = stream.getReader();
    let frames = 0;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || this.closed) break;
        // Once a call: a call whose peer is never heard shows in the log as one without this line.
        if (frames++ === 0) this.log.info('peer audio flowing');
        mediaProbe?.onFrame(this.room.name ?? '', 'in', value.data);
        this.handlers?.onAudio(value.data);
      }
    } catch (err) {
      if (!this.closed) this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'callee audio stream failed');
    } finally {
      reader.releaseLock();
    }
  }

  private hangup(reason: string): void {
    if (this.hungUp) return;
    this.hungUp = reason;
    this.markHungUp(reason);
    this.handlers?.onHangup(reason);
  }

  sendAudio(pcm: Int16Array): void {
    if (this.closed) return;
    mediaProbe?.onFrame(this.room.name ?? '', 'out', pcm);
    this.capture.send(pcm);
  }

  /** Events go to the room as data (topic `events`): a browser in the room sees the WebSocket protocol's shapes. */
  sendMessage(msg: ServerMessage): void {
    if (this.closed || !this.room.isConnected) return;
    this.room.localParticipant?.publishData(this.encoder.encode(JSON.stringify(msg)), { reliable: true, topic: 'events' }).catch(() => undefined);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.hungUp ??= 'closed_by_worker';
    void this.stream?.cancel().catch(() => undefined);
    this.releaseStream?.();
    void this.cleanup(this.keepRoom);
  }
}
