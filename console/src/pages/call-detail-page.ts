// One call: its fields (with who answered it and how long detecting that took), the status timeline (every move timestamped), the recording key, and its
// timeline: statuses, what was said, the bot's actions and transfer, in time order. Refreshes itself
// while the call is still moving. Its recording plays in an <audio> element: fetched with the admin token
// (GET /api/v1/calls/{id}/recording) and handed over as an object URL (download.ts); a long one on request.
import { html, nothing } from 'lit';
import { TERMINAL_CALL_STATUSES, type Call, type CallAction, type CallControl } from '@voice-platform/schemas/calls.js';
import { actionDetail, callEvents, timeline, type CallEvent } from '../core/callTimeline.js';
import { SEGMENT_LABELS, turnSummary, waterfall, type SegmentKey } from '../core/callTurns.js';
import { amdDuration, answeredByLabel, endReasonLabel } from '../core/callOutcome.js';
import { LightElement } from '../components/base.js';
import { may } from '../core/permissions.js';
import { errorBanner } from '../components/field.js';
import { keysLine } from '../components/keys.js';
import { api, ApiError } from '../core/api.js';
import { autoLoadRecording, contentLength, formatBytes, ObjectUrlSlot } from '../core/download.js';
import { formatDateTime, statusLabel } from '../core/format.js';
import { ANALYSIS_STATUS_LABELS, analysisRows, stillMoving, successLabel } from '../core/callAnalysis.js';

const POLL_MS = 2000;

/** Where the recording is: not asked for yet, being read, shown, too long to read unasked, or failed. */
type RecordingState = 'none' | 'loading' | 'ready' | 'large' | 'error';
const ACTION_LABEL: Record<CallAction['type'], string> = {
  tool: 'Tool',
  transfer: 'Transfer',
  dtmf_in: 'Keys pressed',
  dtmf_out: 'Keys sent',
  control: 'Supervisor',
  flow: 'Flow node',
  handoff: 'Handoff',
};

export class VpCallDetailPage extends LightElement {
  static override properties = {
    callId: { attribute: false },
    call: { state: true },
    error: { state: true },
    recording: { state: true },
    recordingSize: { state: true },
    recordingError: { state: true },
    controlNote: { state: true },
    listening: { state: true },
    controlError: { state: true },
  };
  declare callId: string;
  declare call: Call | null;
  declare error: string | null;
  declare recording: RecordingState;
  declare recordingSize: number | null;
  declare recordingError: string | null;
  /** What the last supervisor control did, or why it was refused. */
  declare controlNote: string | null;
  declare controlError: string | null;
  /** Listen: null (not listening), or the voices heard so far in the call's room. */
  declare listening: { voices: number } | null;
  private listenRoom: import('livekit-client').Room | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The recording's object URL (revoked when another call is shown or the page is left). */
  private readonly audio = new ObjectUrlSlot();
  /** The recording key the recording was asked for (a call gets its key once, after it ended). */
  private recordingKey: string | null = null;

  constructor() {
    super();
    this.callId = '';
    this.call = null;
    this.error = null;
    this.recording = 'none';
    this.recordingSize = null;
    this.recordingError = null;
    this.controlNote = null;
    this.controlError = null;
    this.listening = null;
  }

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('callId') && this.callId) {
      this.resetRecording();
      void this.load();
    }
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.timer);
    this.resetRecording();
    this.stopListening();
  }

  private resetRecording(): void {
    this.audio.clear();
    this.recordingKey = null;
    this.recording = 'none';
    this.recordingSize = null;
    this.recordingError = null;
  }

  /** Reads the recording: its size first, then (if small enough, or `asked`) the file itself. */
  private async loadRecording(asked: boolean): Promise<void> {
    const id = this.callId;
    const key = this.recordingKey;
    const current = () => id === this.callId && key === this.recordingKey && this.isConnected;
    this.recording = 'loading';
    this.recordingError = null;
    try {
      if (!asked) {
        this.recordingSize = contentLength((await api.recordingInfo(id)).headers);
        if (!current()) return;
        if (!autoLoadRecording(this.recordingSize)) {
          this.recording = 'large';
          return;
        }
      }
      const { blob } = await api.recording(id);
      if (!current()) return;
      this.recordingSize = blob.size;
      this.audio.set(blob.type === 'audio/wav' ? blob : new Blob([blob], { type: 'audio/wav' }));
      this.recording = 'ready';
    } catch (err) {
      if (!current()) return;
      this.recording = 'error';
      this.recordingError =
        err instanceof ApiError && err.code === 'recording_not_found'
          ? 'The recording is not in storage (it may have been deleted).'
          : err instanceof ApiError
            ? err.message
            : 'Could not load the recording.';
    }
  }

  private async load(): Promise<void> {
    clearTimeout(this.timer);
    try {
      this.call = await api.getCall(this.callId);
      if (this.call.status !== 'in_progress') this.stopListening();
      this.error = null;
      if (this.call.recording_key && this.call.recording_key !== this.recordingKey) {
        this.recordingKey = this.call.recording_key;
        void this.loadRecording(false);
      }
      // An ended call is looked at again while its post-call analysis is pending.
      if (stillMoving(this.call, TERMINAL_CALL_STATUSES) && this.isConnected) this.timer = setTimeout(() => void this.load(), POLL_MS);
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not load the call.';
    }
  }

  private renderEvent(e: CallEvent) {
    const at = html`<time datetime=${e.at}>${formatDateTime(e.at)}</time>`;
    switch (e.kind) {
      case 'status':
        return html`<li class="status" data-kind="status"><span class="who">Status</span> ${at}<p class="what"><vp-status-badge status=${e.status}></vp-status-badge></p></li>`;
      case 'turn':
        return html`<li class=${e.turn.role} data-kind="turn"><span class="who">${e.turn.role === 'bot' ? 'Bot' : 'Caller'}</span> ${at}<p>${e.turn.dtmf ? keysLine(e.turn.role, e.turn.text) : e.turn.text}</p></li>`;
      case 'action': {
        const a = e.action;
        const args = actionDetail(a.arguments);
        const outcome = a.status === 'ok' ? actionDetail(a.result) : a.error ?? '';
        return html`<li class="action ${a.status}" data-kind="action">
          <span class="who">${ACTION_LABEL[a.type]}</span> ${at}
          <p class="what"><code>${a.name}</code> <vp-status-badge status=${a.status}></vp-status-badge> <span class="duration">${a.duration_ms} ms</span></p>
          ${args ? html`<p class="detail"><span class="label">Arguments</span> <code>${args}</code></p>` : nothing}
          ${outcome ? html`<p class="detail"><span class="label">${a.status === 'ok' ? 'Result' : 'Error'}</span> <code>${outcome}</code></p>` : nothing}
        </li>`;
      }
      case 'transfer': {
        const t = e.transfer;
        return html`<li class="action transfer" data-kind="transfer">
          <span class="who">Transfer (${t.mode})</span> ${at}
          <p class="what"><span class="mono">${t.target}</span> <vp-status-badge status=${t.status}></vp-status-badge>${t.sip_status_code !== null ? html` <span class="duration">SIP ${t.sip_status_code}</span>` : nothing}</p>
        </li>`;
      }
    }
  }

  private renderRecording(c: Call) {
    if (!c.recording_key) return nothing;
    const size = this.recordingSize;
    const url = this.audio.url;
    return html`<section class="panel" aria-labelledby="call-recording">
      <h2 id="call-recording">Recording</h2>
      ${this.recording === 'loading' ? html`<p class="loading" role="status">Loading the recording…</p>` : nothing}
      ${this.recording === 'ready' && url
        ? html`<audio controls preload="metadata" src=${url} aria-label="Call recording" data-testid="recording-audio"></audio>
            <p class="hint">Stereo WAV: the caller on the left, the bot on the right. <a href=${url} download="call-${c.call_id}.wav">Download</a>${size !== null ? ` (${formatBytes(size)})` : ''}</p>`
        : nothing}
      ${this.recording === 'large'
        ? html`<p class="hint">The recording is ${size !== null ? formatBytes(size) : 'large'}: it is read whole into this page to play.</p>
            <button class="small" @click=${() => this.loadRecording(true)}>Load the recording</button>`
        : nothing}
      ${this.recording === 'error'
        ? html`${errorBanner(this.recordingError)}<button class="small" @click=${() => this.loadRecording(false)}>Try again</button>`
        : nothing}
    </section>`;
  }

  /** Post-call analysis (docs/design.md §10): none for a bot that asks for none. */
  private renderAnalysis(c: Call) {
    const a = c.analysis;
    if (!a) return nothing;
    const rows = analysisRows(a);
    return html`<section class="panel" aria-labelledby="call-analysis" data-testid="call-analysis" data-analysis-status=${a.status}>
      <h2 id="call-analysis">Analysis</h2>
      <dl class="props">
        <dt>Status</dt><dd data-testid="analysis-status">${ANALYSIS_STATUS_LABELS[a.status] ?? a.status}</dd>
        ${a.status === 'failed' ? html`<dt>Error</dt><dd data-testid="analysis-error">${a.error ?? '—'}</dd>` : nothing}
        ${a.summary !== null ? html`<dt>Summary</dt><dd data-testid="analysis-summary">${a.summary}</dd>` : nothing}
        ${a.status === 'done' ? html`<dt>Success</dt><dd data-testid="analysis-success" data-success=${String(a.success)}>${successLabel(a.success)}</dd>` : nothing}
        ${a.completed_at ? html`<dt>Completed</dt><dd>${formatDateTime(a.completed_at)}</dd>` : nothing}
      </dl>
      ${rows.length
        ? html`<h3>Fields</h3>
            <dl class="props" data-testid="analysis-data">${rows.map(([k, v]) => html`<dt class="mono">${k}</dt><dd data-field=${k}>${v}</dd>`)}</dl>`
        : nothing}
    </section>`;
  }

  /** Joins the call's room hidden, subscribe-only, and plays every voice in it (the caller and the bot). */
  private async listen(): Promise<void> {
    this.controlError = null;
    try {
      const t = await api.listenToken(this.callId);
      const lk = await import('livekit-client');
      const room = new lk.Room();
      this.listenRoom = room;
      this.listening = { voices: 0 };
      room.on(lk.RoomEvent.TrackSubscribed, (track) => {
        if (track.kind !== lk.Track.Kind.Audio || this.listenRoom !== room) return;
        const el = track.attach();
        el.dataset.listen = 'voice';
        this.querySelector('#call-listen-audio')?.append(el);
        this.listening = { voices: (this.listening?.voices ?? 0) + 1 };
      });
      room.on(lk.RoomEvent.TrackUnsubscribed, (track) => {
        for (const el of track.detach()) el.remove();
      });
      room.on(lk.RoomEvent.Disconnected, () => {
        if (this.listenRoom === room) this.stopListening();
      });
      await room.connect(t.livekit_url, t.access_token, { autoSubscribe: true });
    } catch (err) {
      this.stopListening();
      this.controlError = err instanceof ApiError ? err.message : `Cannot listen: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  private stopListening(): void {
    const room = this.listenRoom;
    this.listenRoom = null;
    this.listening = null;
    void room?.disconnect();
    this.querySelector('#call-listen-audio')?.replaceChildren();
  }

  /** Live supervision (docs/design.md §16): while the call is in progress, an editor or more steers it. */
  private renderSupervise(c: Call) {
    if (c.status !== 'in_progress' || !may('POST /api/v1/calls/{id}/control')) return nothing;
    const send = async (e: Event, type: CallControl['type']) => {
      e.preventDefault();
      const form = (e.target as HTMLElement).closest('form')!;
      const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | null)?.value.trim() ?? '';
      const body: CallControl = type === 'say' || type === 'instruct' ? { type, text: field(type) } : type === 'transfer' ? { type, to: field('to') } : { type };
      this.controlError = null;
      try {
        await api.controlCall(this.callId, body);
        this.controlNote = { say: 'The bot is saying it now.', instruct: 'The model reads it before its next reply.', transfer: 'Transferring the call.', end: 'The bot is hanging up.' }[type];
        form.reset();
      } catch (err) {
        this.controlNote = null;
        this.controlError = err instanceof ApiError ? err.message : String(err);
      }
    };
    return html`<section class="panel" aria-labelledby="call-supervise" data-testid="call-supervise">
      <h2 id="call-supervise">Supervise</h2>
      <p class="hint">The call is live: what you send here reaches it at once, and is on its timeline and in the audit log.</p>
      ${errorBanner(this.controlError)}
      ${this.controlNote ? html`<div class="banner banner-ok" role="status">${this.controlNote}</div>` : nothing}
      ${c.direction === 'websocket' || !may('POST /api/v1/calls/{id}/listen-token')
        ? nothing
        : html`<div class="inline-form">
            ${this.listening
              ? html`<button type="button" @click=${() => this.stopListening()}>Stop listening</button>
                  <span class="hint" data-testid="listening" data-voices=${this.listening.voices} role="status">Listening: ${this.listening.voices === 1 ? '1 voice' : `${this.listening.voices} voices`}</span>`
              : html`<button type="button" @click=${() => void this.listen()}>Listen</button>`}
            <div id="call-listen-audio" hidden></div>
          </div>`}
      <form class="inline-form" @submit=${(e: Event) => send(e, 'say')}>
        <label>Say now <input name="say" maxlength="1000" required placeholder="The bot says this at once" /></label>
        <button type="submit">Say</button>
      </form>
      <form class="inline-form" @submit=${(e: Event) => send(e, 'instruct')}>
        <label>Instruct the model <input name="instruct" maxlength="1000" required placeholder="Read before its next reply" /></label>
        <button type="submit">Instruct</button>
      </form>
      <form class="inline-form" @submit=${(e: Event) => send(e, 'transfer')}>
        <label>Transfer to <input name="to" required pattern="^(\+[1-9][0-9]{6,14}|sips?:\S{3,250})$" placeholder="+15551234567 or sip:agent@example.com" /></label>
        <button type="submit">Transfer</button>
      </form>
      <form class="inline-form" @submit=${(e: Event) => send(e, 'end')}>
        <button type="submit" class="danger">End the call</button>
      </form>
    </section>`;
  }

  /** Each turn's stages as a waterfall beside its words (docs/design.md §16); calls from before turns were recorded have none. */
  private renderTurns(c: Call) {
    const turns = c.turns ?? [];
    if (!turns.length) return nothing;
    const rows = waterfall(turns);
    return html`<section class="panel" aria-labelledby="call-turns">
      <h2 id="call-turns">Turns</h2>
      <p class="hint">From the caller's last word to the bot's first sound: the wait for the turn's end, then the words, the model, tools and the voice.</p>
      <ol class="turns" data-testid="call-turns">
        ${turns.map(
          (t, i) => html`<li data-testid="turn" data-latency=${t.latency_ms}>
            <div class="turn-head">
              <span class="turn-index">${t.index}</span>
              <q class="turn-words">${t.user_text || '—'}</q>
              <span class="turn-latency mono">${t.latency_ms} ms</span>
              ${t.preemptive ? html`<span class="badge badge-info" title="Prepared during the caller's pause, played at the turn's end">prepared</span>` : nothing}
              ${t.interrupted ? html`<span class="badge badge-warn" title="The caller spoke over this reply">interrupted</span>` : nothing}
            </div>
            <div class="waterfall" role="img" aria-label=${turnSummary(t)} title=${turnSummary(t)}>
              ${rows[i]!.map((s) => html`<span class="seg seg-${s.key}" data-segment=${s.key} style="left:${s.leftPct.toFixed(2)}%;width:${Math.max(0.5, s.widthPct).toFixed(2)}%" title="${s.label} ${s.ms} ms"></span>`)}
            </div>
          </li>`,
        )}
      </ol>
      <p class="legend">${(Object.keys(SEGMENT_LABELS) as SegmentKey[]).map((k) => html`<span><span class="seg-key seg-${k}"></span>${SEGMENT_LABELS[k]}</span>`)}</p>
    </section>`;
  }

  override render() {
    const c = this.call;
    return html`<p><a href="/calls">← All calls</a></p>
      <h1 tabindex="-1">Call ${this.callId}</h1>
      ${errorBanner(this.error)}
      ${!c && !this.error ? html`<p class="loading" role="status">Loading call…</p>` : nothing}
      ${c
        ? html`<div class="cards" style="grid-template-columns: 1fr 1fr">
            <section class="panel" aria-labelledby="call-details">
              <h2 id="call-details">Details</h2>
              <dl class="props">
                <dt>Status</dt><dd><vp-status-badge status=${c.status}></vp-status-badge></dd>
                <dt>Bot</dt><dd><a class="mono" href="/bots/${c.bot_id}">${c.bot_id}</a></dd>
                <dt>Direction</dt><dd>${statusLabel(c.direction)}</dd>
                <dt>To</dt><dd class="mono">${c.to_number ?? '—'}</dd>
                <dt>From</dt><dd class="mono" data-testid="from-number">${c.from_number ?? '—'}</dd>
                <dt>Created</dt><dd>${formatDateTime(c.created_at)}</dd>
                <dt>Started</dt><dd>${formatDateTime(c.started_at)}</dd>
                <dt>Ended</dt><dd>${formatDateTime(c.ended_at)}</dd>
                <dt>End reason</dt><dd data-testid="end-reason" data-end-reason=${c.end_reason ?? nothing}>${endReasonLabel(c.end_reason)}</dd>
                <dt>Answered by</dt><dd data-testid="answered-by">${answeredByLabel(c.answered_by)}</dd>
                ${c.amd_ms !== null && c.amd_ms !== undefined ? html`<dt>Detection time</dt><dd data-testid="amd-ms" title="From the answer to the verdict">${amdDuration(c.amd_ms)}</dd>` : nothing}
                ${c.sip_status_code !== null && c.sip_status_code !== undefined ? html`<dt>SIP status</dt><dd data-testid="sip-status">${c.sip_status_code}</dd>` : nothing}
                <dt>Recording key</dt><dd class="mono" data-testid="recording-key">${c.recording_key ?? 'No recording'}</dd>
                ${c.recording_error ? html`<dt>Recording error</dt><dd>${c.recording_error}</dd>` : nothing}
              </dl>
            </section>
            <section class="panel" aria-labelledby="call-timeline">
              <h2 id="call-timeline">Status timeline</h2>
              <ol class="timeline">
                ${timeline(c).map(
                  (t) => html`<li class=${t.at ? 'reached' : 'pending'}>
                    <vp-status-badge status=${t.status}></vp-status-badge>
                    <span>${t.at ? html`<time datetime=${t.at}>${formatDateTime(t.at)}</time>` : 'not yet'}</span>
                  </li>`,
                )}
              </ol>
            </section>
          </div>
          ${this.renderSupervise(c)}
          ${this.renderRecording(c)}
          <section class="panel" aria-labelledby="call-events">
            <h2 id="call-events">Timeline</h2>
            ${c.transcript?.length ? nothing : html`<p class="empty">${TERMINAL_CALL_STATUSES.includes(c.status) ? 'Nothing was said on this call.' : 'The transcript is stored when the call ends.'}</p>`}
            <ol class="transcript events" data-testid="call-events">
              ${callEvents(c).map((e) => this.renderEvent(e))}
            </ol>
          </section>
          ${this.renderTurns(c)}
          ${this.renderAnalysis(c)}
          <section class="panel" aria-labelledby="call-variables">
            <h2 id="call-variables">Variables</h2>
            ${Object.keys(c.variables).length
              ? html`<dl class="props">${Object.entries(c.variables).map(([k, v]) => html`<dt class="mono">${k}</dt><dd>${v}</dd>`)}</dl>`
              : html`<p class="empty">This call carries no variables.</p>`}
          </section>`
        : nothing}`;
  }
}
customElements.define('vp-call-detail-page', VpCallDetailPage);
