// Do-not-call: numbers campaigns never dial (checked right before each dial). Add numbers (one per
// line, visual separators allowed), look one up, page through the list (newest first), remove one
// after confirming.
import { html, nothing } from 'lit';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError, type DncEntry } from '../api.js';
import { parseNumbers } from '../trunkForm.js';
import { normalizePhoneNumber } from '@voice-platform/schemas/phone.js';

const possible = (n: string) => normalizePhoneNumber(n).ok;
/** The backend takes at most this many numbers per request. */
const MAX_PER_ADD = 1000;

export class VpDncPage extends LightElement {
  static override properties = {
    entries: { state: true },
    nextCursor: { state: true },
    loadError: { state: true },
    notice: { state: true },
    numbersText: { state: true },
    numbersError: { state: true },
    search: { state: true },
    searchError: { state: true },
    busy: { state: true },
    removing: { state: true },
    removeError: { state: true },
  };
  declare entries: DncEntry[] | null;
  declare nextCursor: string | null;
  declare loadError: string | null;
  declare notice: string | null;
  declare numbersText: string;
  declare numbersError: string | null;
  declare search: string;
  declare searchError: string | null;
  declare busy: boolean;
  declare removing: DncEntry | null;
  declare removeError: string | null;

  constructor() {
    super();
    this.entries = null;
    this.nextCursor = null;
    this.loadError = null;
    this.notice = null;
    this.numbersText = '';
    this.numbersError = null;
    this.search = '';
    this.searchError = null;
    this.busy = false;
    this.removing = null;
    this.removeError = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  /** The first page, or only `number` when looking one up; `more` appends the next page. */
  private async load(opts: { more?: boolean; number?: string } = {}): Promise<void> {
    try {
      const page = await api.listDnc({ cursor: opts.more ? (this.nextCursor ?? undefined) : undefined, number: opts.number });
      this.entries = opts.more ? [...(this.entries ?? []), ...page.items] : page.items;
      this.nextCursor = page.next_cursor;
      this.loadError = null;
    } catch (err) {
      this.loadError = err instanceof ApiError ? err.message : 'Could not load the do-not-call list.';
    }
  }

  private async add(e: Event): Promise<void> {
    e.preventDefault();
    if (this.busy) return;
    const numbers = parseNumbers(this.numbersText);
    const bad = numbers.filter((n) => !possible(n));
    if (!numbers.length) this.numbersError = 'Enter at least one number.';
    else if (bad.length) this.numbersError = `Not numbers that can exist: ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ` and ${bad.length - 5} more` : ''}. Use + and the country code, e.g. +49 151 12345678.`;
    else if (numbers.length > MAX_PER_ADD) this.numbersError = `At most ${MAX_PER_ADD} numbers at once.`;
    else this.numbersError = null;
    if (this.numbersError) {
      await this.updateComplete;
      this.querySelector<HTMLElement>('#dnc-numbers')?.focus();
      return;
    }
    this.busy = true;
    this.notice = null;
    try {
      const r = await api.addDnc(numbers);
      this.numbersText = '';
      this.notice = `${r.added} ${r.added === 1 ? 'number' : 'numbers'} added${r.duplicates ? `; ${r.duplicates} already on the list` : ''}.`;
      this.search = '';
      await this.load();
    } catch (err) {
      this.numbersError = err instanceof ApiError ? err.message : 'Could not add the numbers.';
    } finally {
      this.busy = false;
    }
  }

  private async lookUp(e: Event): Promise<void> {
    e.preventDefault();
    const number = parseNumbers(this.search)[0] ?? '';
    if (number && !possible(number)) {
      this.searchError = 'Enter one number with + and the country code, e.g. +49 151 12345678.';
      return;
    }
    this.searchError = null;
    await this.load(number ? { number } : {});
  }

  private async removeNumber(): Promise<void> {
    const entry = this.removing;
    if (!entry || this.busy) return;
    this.busy = true;
    this.removeError = null;
    try {
      await api.removeDnc(entry.number);
      this.removing = null;
      this.notice = `${entry.number} removed: campaigns may dial it again.`;
      await this.load();
    } catch (err) {
      this.removeError = err instanceof ApiError ? err.message : 'Could not remove the number.';
    } finally {
      this.busy = false;
    }
  }

  private renderList() {
    if (this.loadError) return errorBanner(this.loadError);
    if (!this.entries) return html`<p class="loading" role="status">Loading the do-not-call list…</p>`;
    if (!this.entries.length) return html`<p class="hint" data-testid="dnc-empty">${this.search ? 'That number is not on the list.' : 'The list is empty: campaigns may dial every number.'}</p>`;
    return html`<div class="table-wrap"><table aria-label="Do-not-call numbers">
        <thead><tr><th scope="col">Number</th><th scope="col">Added</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>
          ${this.entries.map(
            (d) => html`<tr data-number=${d.number}>
              <td><code>${d.number}</code></td>
              <td>${new Date(d.created_at).toLocaleString()}</td>
              <td class="row-actions"><button class="small link-danger" aria-label="Remove ${d.number}" @click=${() => {
                this.removing = d;
                this.removeError = null;
              }}>Remove</button></td>
            </tr>`,
          )}
        </tbody>
      </table></div>
      ${this.nextCursor ? html`<button class="small" @click=${() => this.load({ more: true })}>Show more</button>` : nothing}`;
  }

  override render() {
    return html`<div class="page-head">
        <div><h1 tabindex="-1">Do-not-call list</h1>
          <p class="subtitle">Numbers campaigns never dial. Each is checked right before a dial, so a number added while a campaign runs is skipped from then on.</p></div>
      </div>
      ${this.notice ? html`<div class="banner banner-ok" role="status">${this.notice}</div>` : nothing}
      <section class="panel" aria-labelledby="dnc-add-heading">
        <h2 id="dnc-add-heading">Add numbers</h2>
        <form id="dnc-form" novalidate @submit=${(e: Event) => this.add(e)}>
          ${field({ id: 'dnc-numbers', label: 'Numbers', error: this.numbersError ?? undefined, hint: 'One E.164 number per line (spaces, dashes and parentheses are fine), at most 1000 at once.' }, (a) =>
            html`<textarea id=${a.id} class="mono" spellcheck="false" .value=${this.numbersText} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
              @input=${(e: Event) => {
                this.numbersText = (e.target as HTMLTextAreaElement).value;
                this.numbersError = null;
              }}></textarea>`,
          )}
          <button class="primary" type="submit" ?disabled=${this.busy}>Add to the list</button>
        </form>
      </section>
      <form class="toolbar" role="search" @submit=${(e: Event) => this.lookUp(e)}>
        ${field({ id: 'dnc-search', label: 'Look up a number', error: this.searchError ?? undefined }, (a) =>
          html`<input id=${a.id} .value=${this.search} spellcheck="false" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
            @input=${(e: Event) => (this.search = (e.target as HTMLInputElement).value)} />`,
        )}
        <button type="submit">Look up</button>
      </form>
      ${this.renderList()}
      <vp-dialog
        heading="Remove this number?"
        .open=${this.removing !== null}
        @vp-close=${() => (this.removing = null)}
        .content=${this.removing ? html`<p>Campaigns may dial <code>${this.removing.number}</code> again.</p>${errorBanner(this.removeError)}` : nothing}
        .actions=${html`<button @click=${() => (this.removing = null)} autofocus>Cancel</button>
          <button class="danger" ?disabled=${this.busy} @click=${() => this.removeNumber()}>Remove number</button>`}
      ></vp-dialog>`;
  }
}
customElements.define('vp-dnc-page', VpDncPage);
