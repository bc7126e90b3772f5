// Do-not-call: numbers campaigns never dial (checked right before each dial). Add numbers (one per
// line, visual separators allowed), look one up, page through the list (newest first), remove one
// after confirming.
import { html, nothing } from 'lit';
import { ResourcePage } from '../components/resource-page.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError, type DncEntry } from '../core/api.js';
import { parseNumbers, trunkFieldErrors } from '../core/trunkForm.js';
import { may } from '../core/permissions.js';
import { numberListError, phoneNumberError } from '../core/phoneValidation.js';

/** The backend takes at most this many numbers per request. */
const MAX_PER_ADD = 1000;

export class VpDncPage extends ResourcePage<DncEntry, void> {
  static override properties = {
    numbersText: { state: true },
    numbersError: { state: true },
    search: { state: true },
    searchError: { state: true },
  };
  declare numbersText: string;
  declare numbersError: string | null;
  declare search: string;
  declare searchError: string | null;
  /** The number looked up (only it is listed), or undefined for the whole list. */
  private lookingUp: string | undefined;

  protected readonly failed = { load: 'Could not load the do-not-call list.', save: 'Could not add the numbers.', delete: 'Could not remove the number.' };

  constructor() {
    super();
    this.numbersText = '';
    this.numbersError = null;
    this.search = '';
    this.searchError = null;
    this.lookingUp = undefined;
  }

  /** The first page, or only the number looked up; `more` appends the next page. */
  protected async fetchAll(more: boolean): Promise<void> {
    const page = await api.listDnc({ cursor: more ? (this.nextCursor ?? undefined) : undefined, number: this.lookingUp });
    this.items = more ? [...(this.items ?? []), ...page.items] : page.items;
    this.nextCursor = page.next_cursor;
  }

  protected override removeItem(entry: DncEntry): Promise<void> {
    return api.removeDnc(entry.number);
  }

  protected override deleted(entry: DncEntry): void {
    this.lookingUp = undefined; // the whole list again, as after adding
    this.notice = `${entry.number} removed: campaigns may dial it again.`;
  }

  private async add(e: Event): Promise<void> {
    e.preventDefault();
    if (this.busy) return;
    const numbers = parseNumbers(this.numbersText);
    // The backend's check (libphonenumber), each impossible number named with the reason.
    const bad = numberListError(numbers);
    if (!numbers.length) this.numbersError = 'Enter at least one number.';
    else if (bad) this.numbersError = bad;
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
      this.lookingUp = undefined;
      await this.load();
    } catch (err) {
      // A 422 names each number (`numbers.N`) with the backend's reason.
      this.numbersError = err instanceof ApiError ? (trunkFieldErrors(err.fieldErrors, numbers).numbers ?? err.message) : 'Could not add the numbers.';
    } finally {
      this.busy = false;
    }
  }

  private async lookUp(e: Event): Promise<void> {
    e.preventDefault();
    const number = parseNumbers(this.search)[0] ?? '';
    const error = number ? phoneNumberError(number) : null;
    if (error) {
      this.searchError = error;
      return;
    }
    this.searchError = null;
    this.lookingUp = number || undefined;
    await this.load();
  }

  private renderList() {
    const state = this.renderListState('Loading the do-not-call list…');
    if (state || !this.items) return state;
    if (!this.items.length) return html`<p class="hint" data-testid="dnc-empty">${this.search ? 'That number is not on the list.' : 'The list is empty: campaigns may dial every number.'}</p>`;
    return html`<div class="table-wrap"><table aria-label="Do-not-call numbers">
        <thead><tr><th scope="col">Number</th><th scope="col">Added</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>
          ${this.items.map(
            (d) => html`<tr data-number=${d.number}>
              <td><code>${d.number}</code></td>
              <td>${new Date(d.created_at).toLocaleString()}</td>
              <td class="row-actions">${may('DELETE /api/v1/dnc/{number}')
                ? this.renderDeleteButton(d, d.number, 'Remove')
                : nothing}</td>
            </tr>`,
          )}
        </tbody>
      </table></div>
      ${this.renderMore()}`;
  }

  private renderAdd() {
    return html`<section class="panel" aria-labelledby="dnc-add-heading">
        <h2 id="dnc-add-heading">Add numbers</h2>
        <form id="dnc-form" novalidate @submit=${(e: Event) => this.add(e)}>
          ${field({ id: 'dnc-numbers', label: 'Numbers', error: this.numbersError ?? undefined, hint: 'One number per line in international format (+ and the country code; spaces, dashes and parentheses are fine), at most 1000 at once. Stored as E.164.' }, (a) =>
            html`<textarea id=${a.id} class="mono" spellcheck="false" .value=${this.numbersText} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
              @input=${(e: Event) => {
                this.numbersText = (e.target as HTMLTextAreaElement).value;
                this.numbersError = null;
              }}></textarea>`,
          )}
          <button class="primary" type="submit" ?disabled=${this.busy}>Add to the list</button>
        </form>
      </section>`;
  }

  override render() {
    return html`${this.renderHead('Do-not-call list', 'Numbers campaigns never dial. Each is checked right before a dial, so a number added while a campaign runs is skipped from then on.')}
      ${may('POST /api/v1/dnc') ? this.renderAdd() : nothing}
      <form class="toolbar" role="search" @submit=${(e: Event) => this.lookUp(e)}>
        ${field({ id: 'dnc-search', label: 'Look up a number', error: this.searchError ?? undefined }, (a) =>
          html`<input id=${a.id} .value=${this.search} spellcheck="false" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
            @input=${(e: Event) => (this.search = (e.target as HTMLInputElement).value)} />`,
        )}
        <button type="submit">Look up</button>
      </form>
      ${this.renderList()}
      ${this.renderDeleteDialog('Remove this number?', 'Remove number', (d) => html`<p>Campaigns may dial <code>${d.number}</code> again.</p>${errorBanner(this.deleteError)}`)}`;
  }
}
customElements.define('vp-dnc-page', VpDncPage);
