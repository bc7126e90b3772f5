// Modal dialog on the native <dialog> (inert background), plus a Tab focus trap that wraps inside the
// dialog, Escape to close, and focus returned to where it was. Parents own `open`; closing asks them
// through a `vp-close` event. Light DOM (content and actions are templates the parent passes), so the
// dialog's content is ordinary document content for labels, ids and assistive technology.
import { html, nothing, type TemplateResult } from 'lit';
import { LightElement } from './base.js';

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';
let seq = 0;

export class VpDialog extends LightElement {
  static override properties = {
    open: { type: Boolean, reflect: true },
    heading: { type: String },
    content: { attribute: false },
    actions: { attribute: false },
  };
  declare open: boolean;
  declare heading: string;
  declare content: TemplateResult | typeof nothing;
  declare actions: TemplateResult | typeof nothing;
  private readonly headingId = `vp-dialog-heading-${++seq}`;
  private returnFocus: HTMLElement | null = null;

  constructor() {
    super();
    this.open = false;
    this.heading = '';
    this.content = nothing;
    this.actions = nothing;
  }

  private get dialog(): HTMLDialogElement | null {
    return this.querySelector(':scope > dialog');
  }

  private focusables(): HTMLElement[] {
    return Array.from(this.dialog?.querySelectorAll<HTMLElement>(FOCUSABLE) ?? []);
  }

  protected override updated(changed: Map<string, unknown>): void {
    if (!changed.has('open')) return;
    const d = this.dialog;
    if (!d) return;
    if (this.open && !d.open) {
      this.returnFocus = document.activeElement as HTMLElement | null;
      d.showModal();
      const items = this.focusables();
      (items.find((el) => el.hasAttribute('autofocus')) ?? items[0])?.focus();
    } else if (!this.open && d.open) {
      d.close();
      this.returnFocus?.focus?.();
      this.returnFocus = null;
    }
  }

  private onKeydown(e: KeyboardEvent): void {
    if (e.key !== 'Tab') return;
    const items = this.focusables();
    if (!items.length) return;
    const first = items[0]!;
    const last = items[items.length - 1]!;
    const active = document.activeElement as HTMLElement | null;
    const inside = active !== null && items.includes(active);
    if (e.shiftKey && (active === first || !inside)) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (active === last || !inside)) {
      e.preventDefault();
      first.focus();
    }
  }

  private onCancel(e: Event): void {
    // Escape: the parent decides (and keeps `open` in sync), so the native close is prevented.
    e.preventDefault();
    this.dispatchEvent(new CustomEvent('vp-close', { bubbles: true }));
  }

  override render() {
    return html`<dialog class="vp-dialog" aria-labelledby=${this.headingId} @keydown=${this.onKeydown} @cancel=${this.onCancel}>
      <div class="vp-dialog-body">
        <h2 id=${this.headingId}>${this.heading}</h2>
        ${this.open ? this.content : nothing}
      </div>
      <div class="vp-dialog-actions">${this.open ? this.actions : nothing}</div>
    </dialog>`;
  }
}
customElements.define('vp-dialog', VpDialog);
