// Outbound trunks: the carrier connections dial-outs go through. List, create and edit (in a dialog),
// make one the default, delete (confirmed). The SIP password is write-only: it lives only in the open
// dialog's password input and the request that sends it; it is dropped as soon as the save succeeds or
// the dialog closes, and it is never prefilled (the API never returns it, only `has_password`).
import { html, nothing } from 'lit';
import type { OutboundTrunk } from '@voice-platform/schemas/trunks.js';
import { ResourcePage, type Editing as EditingOf, type Prepared } from '../components/resource-page.js';
import { checkbox, errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import { emptyTrunkForm, TRANSPORT_OPTIONS, trunkCreateBody, trunkFieldErrors, trunkToForm, trunkUpdateBody, parseNumbers, withTrunkNames, type TrunkForm } from '../core/trunkForm.js';

/** How many numbers a row shows before "and N more". */
const NUMBERS_SHOWN = 4;

type Editing = EditingOf<OutboundTrunk>;

export class VpTrunksPage extends ResourcePage<OutboundTrunk, TrunkForm, { numbers?: string[] }> {
  static override properties = {
    error: { state: true },
    busyId: { state: true },
  };
  declare error: string | null;
  declare busyId: string | null;

  protected override readonly formId = 'trunk-form';
  protected readonly failed = { load: 'Could not load the outbound trunks.', save: 'Could not save the trunk.', delete: 'Could not delete the trunk.' };

  constructor() {
    super();
    this.error = null;
    this.busyId = null;
  }

  protected override emptyForm(): TrunkForm {
    return emptyTrunkForm();
  }

  protected async fetchAll(): Promise<void> {
    this.items = (await api.listTrunks()).items;
  }

  protected override openCreate(): void {
    // The first trunk becomes the default anyway; say so by ticking the box.
    this.openForm({ mode: 'create' }, { ...emptyTrunkForm(), makeDefault: !this.items?.length });
  }

  private openEdit(trunk: OutboundTrunk): void {
    this.openForm({ mode: 'edit', item: trunk }, trunkToForm(trunk));
  }

  // closeForm (the base's) forgets everything typed in the dialog, the password first of all.

  protected override prepare(editing: Editing): Prepared<{ numbers?: string[] }, OutboundTrunk> {
    if (editing.mode === 'create') {
      const { body, errors } = trunkCreateBody(this.form);
      return { body, errors, send: () => api.createTrunk(body) };
    }
    const { body, errors } = trunkUpdateBody(editing.item, this.form);
    return { body, errors, send: () => api.updateTrunk(editing.item.id, body) };
  }

  protected override saved(saved: OutboundTrunk, editing: Editing): void {
    this.notice = editing.mode === 'create' ? `Trunk “${saved.name}” created.` : `Trunk “${saved.name}” updated.`;
    if (saved.default && editing.mode === 'create' && this.items?.some((t) => t.id !== saved.id)) this.notice += ' It is now the default trunk.';
  }

  protected override async saveRefused(err: ApiError, body: { numbers?: string[] }): Promise<void> {
    // 422 details land on their fields; 409 conflict and 503 (LiveKit unreachable) in the banner.
    // 409 `conflict` for a number another trunk has names that trunk (by id: shown by name here).
    const named = (text: string) => withTrunkNames(text, this.items ?? []);
    const fieldErrors = trunkFieldErrors(err.fieldErrors, body.numbers ?? parseNumbers(this.form.numbers));
    this.errors = Object.fromEntries(Object.entries(fieldErrors).map(([k, v]) => [k, named(v)]));
    this.formError = named(err.message);
    if (err.status === 404) await this.load();
  }

  private async makeDefault(trunk: OutboundTrunk): Promise<void> {
    this.busyId = trunk.id;
    this.error = null;
    this.notice = null;
    try {
      const updated = await api.updateTrunk(trunk.id, { default: true });
      this.notice = `“${updated.name}” is now the default trunk.`;
      await this.load();
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not change the default trunk.';
    } finally {
      this.busyId = null;
    }
  }

  // A refused delete (e.g. 409 conflict: the default trunk while others exist) shows the backend's own words.
  protected override removeItem(trunk: OutboundTrunk): Promise<void> {
    return api.deleteTrunk(trunk.id);
  }

  protected override deleted(trunk: OutboundTrunk): void {
    this.notice = `Trunk “${trunk.name}” deleted.`;
  }

  private renderForm(editing: Editing) {
    const f = this.form;
    const trunk = editing.mode === 'edit' ? editing.item : null;
    const hasCredentials = trunk !== null && (trunk.auth_username !== null || trunk.has_password);
    const credsOff = f.removeCredentials;
    const passwordHint = trunk?.has_password
      ? 'A password is stored. Leave this empty to keep it, or type a new one to replace it. It is never shown.'
      : 'Leave empty if the carrier needs no password. Once saved it is never shown again.';
    return html`${errorBanner(this.formError)}
      <form id="trunk-form" novalidate autocomplete="off" @submit=${(e: Event) => this.save(e)}>
        ${field({ id: 'trunk-name', label: 'Name', error: this.errors.name, required: true, hint: 'For you, e.g. “Carrier EU”.' }, (a) =>
          html`<input id=${a.id} .value=${f.name} maxlength="200" aria-required="true" aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} autofocus
            @input=${(e: Event) => this.set({ name: (e.target as HTMLInputElement).value }, 'name')} />`,
        )}
        <div class="grid address-row">
          ${field(
            { id: 'trunk-address', label: 'Address', error: this.errors.address, required: true, hint: 'The carrier’s SIP server as host[:port], e.g. sip.carrier.example.com:5060.' },
            (a) => html`<input id=${a.id} .value=${f.address} maxlength="253" spellcheck="false" autocapitalize="off" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
              aria-invalid=${a.invalid} @input=${(e: Event) => this.set({ address: (e.target as HTMLInputElement).value }, 'address')} />`,
          )}
          ${field({ id: 'trunk-transport', label: 'Transport', error: this.errors.transport }, (a) =>
            html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
              @change=${(e: Event) => this.set({ transport: (e.target as HTMLSelectElement).value as TrunkForm['transport'] }, 'transport')}>
              ${TRANSPORT_OPTIONS.map((o) => html`<option value=${o.value} .selected=${o.value === f.transport}>${o.label}</option>`)}
            </select>`,
          )}
        </div>
        ${field(
          {
            id: 'trunk-numbers',
            label: 'Numbers',
            error: this.errors.numbers,
            required: true,
            hint: 'The caller IDs this trunk may present, one per line in international format (+ and the country code; spaces and punctuation are fine), e.g. +49 30 123456789. Stored as E.164. A dial-out without from_number uses the first.',
          },
          (a) => html`<textarea id=${a.id} class="mono" spellcheck="false" .value=${f.numbers} aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} @input=${(e: Event) => this.set({ numbers: (e.target as HTMLTextAreaElement).value }, 'numbers')}></textarea>`,
        )}
        <fieldset>
          <legend>Authentication (optional)</legend>
          ${trunk
            ? html`<p class="hint note" data-testid="trunk-auth-state">${hasCredentials
                ? html`Stored: username ${trunk.auth_username ? html`<code>${trunk.auth_username}</code>` : 'none'}, ${trunk.has_password ? 'a password' : 'no password'}.`
                : 'No credentials are stored.'}</p>`
            : nothing}
          <div class="grid">
            ${field({ id: 'trunk-auth-username', label: 'Username', error: credsOff ? undefined : this.errors.auth_username }, (a) =>
              html`<input id=${a.id} .value=${credsOff ? '' : f.auth_username} ?disabled=${credsOff} maxlength="128" autocomplete="off" spellcheck="false" autocapitalize="off"
                aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
                @input=${(e: Event) => this.set({ auth_username: (e.target as HTMLInputElement).value }, 'auth_username')} />`,
            )}
            ${field({ id: 'trunk-auth-password', label: trunk?.has_password ? 'New password' : 'Password', error: credsOff ? undefined : this.errors.auth_password, hint: passwordHint }, (a) =>
              html`<input id=${a.id} type="password" .value=${credsOff ? '' : f.auth_password} ?disabled=${credsOff} maxlength="256" autocomplete="new-password"
                aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
                @input=${(e: Event) => this.set({ auth_password: (e.target as HTMLInputElement).value }, 'auth_password')} />`,
            )}
          </div>
          ${hasCredentials
            ? checkbox({
                id: 'trunk-remove-credentials',
                label: 'Remove the credentials',
                checked: f.removeCredentials,
                hint: 'Deletes the stored username and password when you save.',
                onChange: (c) => {
                  this.set({ removeCredentials: c, auth_username: c ? '' : (trunk?.auth_username ?? ''), auth_password: '' });
                  this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => !k.startsWith('auth_')));
                },
              })
            : nothing}
        </fieldset>
        ${trunk?.default
          ? html`<p class="hint note">This is the default trunk. To change that, make another trunk the default.</p>`
          : checkbox({
              id: 'trunk-default',
              label: 'Make this the default trunk',
              checked: f.makeDefault,
              hint: 'Dial-outs without a from_number go through the default trunk. The first trunk is always the default.',
              onChange: (c) => this.set({ makeDefault: c }, 'default'),
            })}
        ${this.errors.default ? html`<p class="error-text">${this.errors.default}</p>` : nothing}
      </form>`;
  }

  private renderNumbers(numbers: string[]) {
    const shown = numbers.slice(0, NUMBERS_SHOWN);
    const more = numbers.length - shown.length;
    return html`<ul class="plain-list">
      ${shown.map((n) => html`<li><code>${n}</code></li>`)}
      ${more > 0 ? html`<li class="hint" title=${numbers.slice(NUMBERS_SHOWN).join(', ')}>and ${more} more</li>` : nothing}
    </ul>`;
  }

  private renderList() {
    const state = this.renderListState('Loading outbound trunks…');
    if (state || !this.items) return state;
    if (!this.items.length) {
      return this.renderEmptyState(
        'trunks',
        'No outbound trunks yet',
        [
          html`An outbound trunk is the connection to your SIP carrier: every dial-out goes through one, and the person
            called sees one of its numbers as the caller ID. Until there is a trunk, dial-outs are refused with
            <code>no_outbound_trunk</code>.`,
          html`You need the carrier’s SIP server address, the numbers it lets you call from, and usually a username and password.
            The first trunk becomes the default.`,
        ],
        this.firstButton('Create the first trunk', 'POST /api/v1/sip/outbound-trunks'),
      );
    }
    const only = this.items.length === 1;
    const canEdit = this.may('PATCH /api/v1/sip/outbound-trunks/{id}');
    const canDelete = this.may('DELETE /api/v1/sip/outbound-trunks/{id}');
    return html`<div class="table-wrap"><table aria-label="Outbound trunks">
      <thead><tr>
        <th scope="col">Name</th><th scope="col">Address</th><th scope="col">Transport</th><th scope="col">Numbers</th>
        <th scope="col">Authentication</th><th scope="col"><span class="sr-only">Actions</span></th>
      </tr></thead>
      <tbody>
        ${this.items.map(
          (t) => html`<tr data-trunk-id=${t.id}>
            <td><span class="trunk-name">${t.name}</span>
              ${t.default ? html` <span class="badge badge-good" data-badge="default">Default</span>` : nothing}</td>
            <td><code>${t.address}</code></td>
            <td>${t.transport.toUpperCase()}</td>
            <td>${this.renderNumbers(t.numbers)}</td>
            <td>${t.auth_username ? html`<code>${t.auth_username}</code>` : html`<span class="hint">No username</span>`}
              ${t.has_password ? html` <span class="badge badge-info" data-badge="password">Password set</span>` : nothing}</td>
            <td class="row-actions">
              ${canEdit ? html`<button class="small" aria-label="Edit ${t.name}" @click=${() => this.openEdit(t)}>Edit</button>` : nothing}
              ${t.default || only || !canEdit
                ? nothing
                : html`<button class="small" aria-label="Make ${t.name} the default" ?disabled=${this.busyId === t.id} @click=${() => this.makeDefault(t)}>Make default</button>`}
              ${canDelete ? this.renderDeleteButton(t, t.name) : nothing}
            </td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  private renderDeleteText(t: OutboundTrunk) {
    const others = (this.items ?? []).filter((x) => x.id !== t.id).length;
    return html`<p>Dial-outs can no longer go through <strong>${t.name}</strong> (<code>${t.address}</code>) or present its numbers. This cannot be undone.</p>
      ${this.deleteError
        ? nothing
        : t.default && others
        ? html`<p class="hint note">It is the default trunk: make another trunk the default first.</p>`
        : !others
          ? html`<p class="hint note">It is the only trunk: dial-outs are refused until you create another.</p>`
          : nothing}
      ${errorBanner(this.deleteError)}`;
  }

  override render() {
    const editing = this.editing;
    return html`${this.renderHead('Outbound trunks', 'The SIP carrier connections dial-outs go through, and the numbers they call from.', 'New trunk', 'POST /api/v1/sip/outbound-trunks')}
      ${errorBanner(this.error)}
      ${this.renderList()}

      ${this.renderFormDialog(editing?.mode === 'edit' ? `Edit trunk “${editing.item.name}”` : 'New outbound trunk', 'Create trunk', (e) => this.renderForm(e))}

      ${this.renderDeleteDialog('Delete this trunk?', 'Delete trunk', (t) => this.renderDeleteText(t))}`;
  }
}
customElements.define('vp-trunks-page', VpTrunksPage);
