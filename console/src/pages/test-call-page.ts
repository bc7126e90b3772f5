// Test call: talk to a bot from the browser, as a caller would. POST /livekit/widget queues a `web`
// call and answers a LiveKit token; the page joins the call's room with livekit-client, publishes the
// microphone and plays the bot's track. The worker's events (transcripts, the end) arrive as data on
// topic `events`; their meaning lives in ../testCall.ts, this page only wires the room to it. While the
// call is live a keypad presses keys as a phone would: each key goes out as a LiveKit DTMF packet (RFC 4733
// code and key), which the worker collects into keypad turns and echoes as `dtmf` transcript lines.
import { html, nothing } from 'lit';
import type { DisconnectReason, LocalAudioTrack, Participant, RemoteTrack, Room } from 'livekit-client';
import type { Bot } from '@voice-platform/schemas/bot.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { keysLine } from '../components/keys.js';
import { api, ApiError } from '../core/api.js';
import {
  BOT_IDENTITY,
  decodeEvent,
  dtmfCode,
  EVENTS_TOPIC,
  inCall,
  initialState,
  isKey,
  KEYPAD_KEYS,
  keyLabel,
  reduce,
  startErrorMessage,
  suggestedValue,
  type CallAction,
  type CallState,
  type KeypadKey,
} from '../core/testCall.js';

type LiveKit = typeof import('livekit-client');
// livekit-client is most of a bundle's weight: loaded with the first test call, not with the console.
let liveKit: Promise<LiveKit> | null = null;
const loadLiveKit = (): Promise<LiveKit> => (liveKit ??= import('livekit-client'));

const PHASE_TEXT: Partial<Record<CallState['phase'], string>> = {
  starting: 'Connecting…',
  waiting: 'Connected. Waiting for the bot to answer…',
  live: 'In call',
};

export class VpTestCallPage extends LightElement {
  static override properties = {
    botId: { attribute: false },
    bot: { state: true },
    loadError: { state: true },
    values: { state: true },
    errors: { state: true },
    call: { state: true },
    audioBlocked: { state: true },
  };
  declare botId: string;
  declare bot: Bot | null;
  declare loadError: string | null;
  declare values: Record<string, string>;
  declare errors: Record<string, string>;
  declare call: CallState;
  declare audioBlocked: boolean;
  private room: Room | null = null;
  private mic: LocalAudioTrack | null = null;
  private loadedFor = '';
  /** Keys go out one after the other, in the order pressed. */
  private keysSent: Promise<void> = Promise.resolve();

  constructor() {
    super();
    this.botId = '';
    this.bot = null;
    this.loadError = null;
    this.values = {};
    this.errors = {};
    this.call = initialState();
    this.audioBlocked = false;
  }

  protected override willUpdate(): void {
    if (this.botId && this.loadedFor !== this.botId) {
      // Another bot's test call (the element is reused across /bots/{id}/test-call): a fresh start.
      if (inCall(this.call.phase)) void this.release();
      this.call = initialState();
      this.loadedFor = this.botId;
      void this.load(this.botId);
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    // Leaving the page hangs up: a call nobody listens to would hold a worker's slot.
    if (inCall(this.call.phase)) this.dispatch({ type: 'hangup' });
    void this.release();
  }

  private async load(id: string): Promise<void> {
    this.bot = null;
    this.loadError = null;
    try {
      this.bot = await api.getBot(id);
      this.values = Object.fromEntries(this.bot.variables.map((v) => [v.name, suggestedValue(v.name)]));
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the bot.';
    }
  }

  private dispatch(action: CallAction): void {
    this.call = reduce(this.call, action);
  }

  /** Leaves the room and stops the microphone (idempotent). */
  private async release(): Promise<void> {
    const room = this.room;
    const mic = this.mic;
    this.room = null;
    this.mic = null;
    this.keysSent = Promise.resolve();
    mic?.stop();
    await room?.disconnect().catch(() => undefined);
  }

  private variables(): Record<string, string> | null {
    const errors: Record<string, string> = {};
    const out: Record<string, string> = {};
    for (const v of this.bot?.variables ?? []) {
      const value = (this.values[v.name] ?? '').trim();
      if (value) out[v.name] = value;
      else if (v.required) errors[v.name] = 'This field is required.';
    }
    this.errors = errors;
    return Object.keys(errors).length ? null : out;
  }

  private async start(e: Event): Promise<void> {
    e.preventDefault();
    const bot = this.bot;
    if (!bot || inCall(this.call.phase)) return;
    const variables = this.variables();
    if (!variables) {
      await this.updateComplete;
      this.querySelector<HTMLElement>('form [aria-invalid="true"]')?.focus();
      return;
    }
    this.dispatch({ type: 'start' });
    this.audioBlocked = false;
    // The microphone first: a denied one then places no call that would wait for nobody.
    let lk: LiveKit;
    let mic: LocalAudioTrack;
    try {
      lk = await loadLiveKit();
      mic = await lk.createLocalAudioTrack({ echoCancellation: true });
    } catch (err) {
      this.dispatch({ type: 'failed', message: startErrorMessage(err) });
      return;
    }
    this.mic = mic;
    if (!inCall(this.call.phase)) return void this.release(); // hung up meanwhile

    let widget;
    try {
      widget = await api.startTestCall({ bot_id: bot.id, ...(bot.variables.length ? { variables } : {}) });
    } catch (err) {
      this.dispatch({ type: 'failed', message: startErrorMessage(err) });
      await this.release();
      return;
    }
    this.dispatch({ type: 'created', callId: widget.call_id });
    if (!inCall(this.call.phase)) return void this.release();

    const room = new lk.Room({ adaptiveStream: false, dynacast: false });
    this.room = room;
    this.wire(lk, room);
    try {
      await room.connect(widget.livekit_url, widget.access_token);
      // The worker starts the call (and the greeting) once this track arrives.
      await room.localParticipant.publishTrack(mic);
      this.audioBlocked = !room.canPlaybackAudio;
    } catch (err) {
      if (this.room !== room) return; // hung up while connecting
      this.dispatch({ type: 'failed', message: `Could not connect to the call: ${err instanceof Error ? err.message : String(err)}` });
      await this.release();
    }
  }

  private wire(lk: LiveKit, room: Room): void {
    const { RoomEvent, Track } = lk;
    const live = () => this.room === room;
    room.on(RoomEvent.DataReceived, (payload, _participant, _kind, topic) => {
      if (!live() || topic !== EVENTS_TOPIC) return;
      const event = decodeEvent(payload);
      if (!event) return;
      this.dispatch({ type: 'event', event });
      if (event.type === 'ended') void this.release();
    });
    room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack) => {
      if (track.kind === Track.Kind.Audio) track.attach(this.querySelector<HTMLAudioElement>('#test-call-audio')!);
    });
    room.on(RoomEvent.TrackUnsubscribed, (track: RemoteTrack) => void track.detach());
    room.on(RoomEvent.ActiveSpeakersChanged, (speakers: Participant[]) => {
      if (live()) this.dispatch({ type: 'speakers', bot: speakers.some((p) => p.identity === BOT_IDENTITY), user: speakers.some((p) => p.isLocal) });
    });
    room.on(RoomEvent.AudioPlaybackStatusChanged, () => {
      if (live()) this.audioBlocked = !room.canPlaybackAudio;
    });
    room.on(RoomEvent.Disconnected, (reason?: DisconnectReason) => {
      if (!live()) return; // our own hang-up
      this.dispatch({ type: 'disconnected', roomDeleted: reason === lk.DisconnectReason.ROOM_DELETED });
      void this.release();
    });
  }

  private async hangUp(): Promise<void> {
    this.dispatch({ type: 'hangup' });
    await this.release();
  }

  private async toggleMute(): Promise<void> {
    const mic = this.mic;
    if (!mic) return;
    const muted = !this.call.muted;
    this.dispatch({ type: 'muted', muted });
    await (muted ? mic.mute() : mic.unmute());
  }

  /** Sends one key into the call's room (the worker hears it as the caller's keypad). */
  private pressKey(key: KeypadKey): void {
    const room = this.room;
    if (!room || this.call.phase !== 'live') return;
    this.dispatch({ type: 'key', key });
    this.keysSent = this.keysSent
      .then(() => room.localParticipant.publishDtmf(dtmfCode(key), key))
      .catch((err: unknown) => {
        if (this.room === room) this.dispatch({ type: 'keyFailed', message: err instanceof Error ? err.message : String(err) });
      });
  }

  /** Typing 0–9, * or # while the keypad has focus presses that key (and shows which one). */
  private keypadKeydown(e: KeyboardEvent): void {
    if (e.ctrlKey || e.metaKey || e.altKey || !isKey(e.key)) return;
    e.preventDefault();
    if (e.repeat) return;
    this.pressKey(e.key);
    this.querySelector<HTMLElement>(`.keypad-keys [data-key="${CSS.escape(e.key)}"]`)?.focus();
  }

  private renderKeypad() {
    return html`<section class="panel keypad" aria-labelledby="keypad-heading">
      <h2 id="keypad-heading">Keypad</h2>
      <p class="hint" id="keypad-hint">Press keys as on a phone: the bot gets them after # or a short pause. With the keypad focused, typing 0–9, * and # presses them too.</p>
      <div class="keypad-keys" role="group" aria-label="Keypad" aria-describedby="keypad-hint" @keydown=${(e: KeyboardEvent) => this.keypadKeydown(e)}>
        ${KEYPAD_KEYS.map((k) => html`<button type="button" class="keypad-key" data-key=${k} aria-label=${keyLabel(k)} @click=${() => this.pressKey(k)}>${k}</button>`)}
      </div>
      <p class="keypad-pressed" data-testid="keys-pressed">${this.call.pressed ? html`Pressed: <span class="keys">${this.call.pressed}</span>` : html`&nbsp;`}</p>
    </section>`;
  }

  private renderForm(bot: Bot) {
    const vars = bot.variables;
    return html`<form novalidate @submit=${this.start} aria-label="Start a test call">
      ${vars.length
        ? html`<fieldset>
            <legend>Variables for this call</legend>
            <p class="hint note">The bot declares these; the values below stand in for what your CRM would send.</p>
            <div class="grid">
              ${vars.map((v) =>
                field({ id: `test-call-var-${v.name}`, label: v.name, required: v.required, hint: v.description || (v.required ? undefined : 'Optional.'), error: this.errors[v.name] }, (a) =>
                  html`<input id=${a.id} .value=${this.values[v.name] ?? ''} aria-required=${v.required ? 'true' : nothing} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
                    @input=${(e: Event) => {
                      this.values = { ...this.values, [v.name]: (e.target as HTMLInputElement).value };
                      if (this.errors[v.name]) this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => k !== v.name));
                    }} />`,
                ),
              )}
            </div>
          </fieldset>`
        : nothing}
      ${bot.active ? nothing : html`<div class="banner banner-warn">This bot is inactive and accepts no calls. <a href="/bots/${bot.id}">Activate it</a> to test it.</div>`}
      <div class="form-actions">
        <button class="primary" type="submit" ?disabled=${!bot.active}>${this.call.callId ? 'Start another test call' : 'Start test call'}</button>
        <a class="button" href="/bots/${bot.id}">Back to the bot</a>
      </div>
    </form>`;
  }

  private renderCall() {
    const c = this.call;
    const active = inCall(c.phase);
    return html`${active
        ? html`<div class="call-bar">
            <p class="call-phase" role="status" data-testid="call-phase">${PHASE_TEXT[c.phase]}</p>
            <p class="speaking">
              ${c.botSpeaking ? html`<span class="speaking-badge bot">Bot speaking</span>` : nothing}
              ${c.userSpeaking ? html`<span class="speaking-badge user">You are speaking</span>` : nothing}
              ${c.muted ? html`<span class="speaking-badge muted">Microphone muted</span>` : nothing}
            </p>
            <div class="call-controls">
              <button type="button" ?disabled=${!this.mic} @click=${() => this.toggleMute()}>${c.muted ? 'Unmute microphone' : 'Mute microphone'}</button>
              <button type="button" class="danger" @click=${() => this.hangUp()}>Hang up</button>
            </div>
          </div>`
        : nothing}
      ${c.message ? (c.phase === 'failed' ? errorBanner(c.message) : html`<div class="banner ${active ? 'banner-warn' : 'banner-info'}" role="status" data-testid="call-end">${c.message}</div>`) : nothing}
      ${this.audioBlocked && active
        ? html`<div class="banner banner-warn">The browser paused the bot’s audio. <button type="button" class="small" @click=${() => this.room?.startAudio().then(() => (this.audioBlocked = false))}>Play the bot’s audio</button></div>`
        : nothing}
      ${c.callId
        ? html`<p class="test-call-id">Call record:
            ${active
              ? // Leaving this page hangs up: during the call the record opens in another tab.
                html`<a href="/calls/${c.callId}" target="_blank" rel="noopener" data-testid="call-link">${c.callId}<span class="sr-only"> (opens in a new tab)</span></a>`
              : html`<a href="/calls/${c.callId}" data-testid="call-link">${c.callId}</a>`}</p>`
        : nothing}
      <div class="test-call-body">
      ${!c.callId && !c.lines.length
        ? nothing
        : html`<section class="panel transcript-panel" aria-labelledby="test-call-transcript">
            <h2 id="test-call-transcript">Live transcript</h2>
            <ol class="transcript live" role="log" aria-labelledby="test-call-transcript" data-testid="live-transcript">
              ${c.lines.map(
                (l) =>
                  html`<li class="${l.role}${l.final ? '' : ' interim'}${l.dtmf ? ' dtmf' : ''}"><span class="who">${l.role === 'bot' ? 'Bot' : 'You'}</span>${l.final ? nothing : html` <span class="sr-only">(still listening)</span>`}<p>${l.dtmf ? keysLine(l.role, l.text) : l.text}</p></li>`,
              )}
            </ol>
            ${c.lines.length ? nothing : html`<p class="empty">${active ? 'What you and the bot say shows here.' : 'Nothing was said.'}</p>`}
          </section>`}
      ${c.phase === 'live' ? this.renderKeypad() : nothing}
      </div>`;
  }

  override render() {
    const bot = this.bot;
    return html`<h1 tabindex="-1">${bot ? `Test call: ${bot.name}` : 'Test call'}</h1>
      <p class="subtitle">Talk to the bot through your microphone, as a caller would. The call is recorded like any other, as a <code>web</code> call.</p>
      ${this.loadError ? html`${errorBanner(this.loadError)}<a href="/bots">Back to the bots</a>` : nothing}
      ${!bot && !this.loadError ? html`<p class="loading" role="status">Loading bot…</p>` : nothing}
      ${bot ? this.renderCall() : nothing}
      ${bot && !inCall(this.call.phase) ? this.renderForm(bot) : nothing}
      <audio id="test-call-audio" autoplay></audio>`;
  }
}
customElements.define('vp-test-call-page', VpTestCallPage);
