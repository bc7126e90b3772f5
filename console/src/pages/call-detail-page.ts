// One call: its fields, the status timeline (every move timestamped), the recording key. Refreshes
// itself while the call is still moving.
import { html, nothing } from 'lit';
import { TERMINAL_CALL_STATUSES, type Call } from '@voice-platform/schemas/calls.js';
import { timeline } from '../callTimeline.js';
import { LightElement } from '../components/base.js';
import { errorBanner } from '../components/field.js';
import { api, ApiError } from '../api.js';
import { formatDateTime, statusLabel } from '../format.js';

const POLL_MS = 2000;

export class VpCallDetailPage extends LightElement {
  static override properties = { callId: { attribute: false }, call: { state: true }, error: { state: true } };
  declare callId: string;
  declare call: Call | null;
  declare error: string | null;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    this.callId = '';
    this.call = null;
    this.error = null;
  }

  protected override willUpdate(changed: Map<string, unknown>): void {
    if (changed.has('callId') && this.callId) void this.load();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.timer);
  }

  private async load(): Promise<void> {
    clearTimeout(this.timer);
    try {
      this.call = await api.getCall(this.callId);
      this.error = null;
      if (!TERMINAL_CALL_STATUSES.includes(this.call.status) && this.isConnected) this.timer = setTimeout(() => void this.load(), POLL_MS);
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not load the call.';
    }
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
                <dt>End reason</dt><dd data-testid="end-reason">${c.end_reason ?? '—'}</dd>
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
          <section class="panel" aria-labelledby="call-transcript">
            <h2 id="call-transcript">Transcript</h2>
            ${c.transcript?.length
              ? html`<ol class="transcript" data-testid="transcript">
                  ${c.transcript.map(
                    (t) => html`<li class=${t.role}><span class="who">${t.role === 'bot' ? 'Bot' : 'Caller'}</span> <time datetime=${t.at}>${formatDateTime(t.at)}</time><p>${t.text}</p></li>`,
                  )}
                </ol>`
              : html`<p class="empty">${TERMINAL_CALL_STATUSES.includes(c.status) ? 'Nothing was said on this call.' : 'The transcript is stored when the call ends.'}</p>`}
          </section>
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
