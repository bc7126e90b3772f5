// A status as colour and text (never colour alone), for API keys, bots, calls, campaigns and their contacts.
import { html } from 'lit';
import { LightElement } from './base.js';
import { statusLabel } from '../core/format.js';

const TONE: Record<string, string> = {
  active: 'good',
  completed: 'good',
  in_progress: 'info',
  dialing: 'info',
  ringing: 'info',
  queued: 'neutral',
  inactive: 'neutral',
  canceled: 'neutral',
  expired: 'warn',
  busy: 'warn',
  no_answer: 'warn',
  failed: 'bad',
  draft: 'neutral',
  running: 'info',
  paused: 'warn',
  pending: 'neutral',
  retry_scheduled: 'warn',
  skipped_dnc: 'neutral',
  // A call's actions and transfer.
  ok: 'good',
  accepted: 'good',
};

/** Where the plain words of the status would not do. */
const LABEL: Record<string, string> = { skipped_dnc: 'Skipped (do-not-call)', ok: 'OK' };

export class VpStatusBadge extends LightElement {
  static override properties = { status: { type: String } };
  declare status: string;

  constructor() {
    super();
    this.status = '';
  }

  override render() {
    const tone = TONE[this.status] ?? 'neutral';
    return html`<span class="badge badge-${tone}" data-status=${this.status}>${LABEL[this.status] ?? statusLabel(this.status)}</span>`;
  }
}
customElements.define('vp-status-badge', VpStatusBadge);
