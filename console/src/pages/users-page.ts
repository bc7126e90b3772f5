// Users (owners and admins): the list (email, name, role, status, last sign-in), a new user (its one-time
// password shown once, in a dialog, with a Copy button), a user's name and role (a dialog), deactivate
// (confirmed: their tokens stop working at once) and reactivate. The backend's refusals are shown as it
// words them: 409 last_owner (the last active owner cannot be demoted or deactivated), 403 forbidden (an
// admin changing an owner or making one), 409 user_exists.
import { html, nothing } from 'lit';
import type { User, UserCreate, UserCreated, UserRole, UserUpdate } from '@voice-platform/schemas/users.js';
import { ResourcePage, type Editing as EditingOf, type Prepared } from '../components/resource-page.js';
import { errorBanner, field } from '../components/field.js';
import { copySecret, secretContent } from '../components/secret.js';
import { api, ApiError } from '../core/api.js';
import { formatDateTime } from '../core/format.js';
import { currentRole, ROLES } from '../core/permissions.js';

type Editing = EditingOf<User>;

export interface UserForm {
  email: string;
  name: string;
  role: UserRole;
}

const ROLE_HINT: Record<UserRole, string> = {
  owner: 'everything, and manages users, owners included',
  admin: 'everything except changing an owner or making one',
  editor: 'bots, campaigns, contacts, do-not-call, test calls; reads the rest',
  viewer: 'reads everything but secrets; changes nothing',
};

/** The request a user form makes: the whole user to create, or only what changed. */
export function userBody(form: UserForm, editing: Editing): { body: Partial<UserCreate>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const name = form.name.trim();
  if (!name) errors.name = 'Enter a name.';
  else if (name.length > 200) errors.name = 'At most 200 characters.';
  if (editing.mode === 'create') {
    const email = form.email.trim();
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || email.length < 3 || email.length > 320) errors.email = 'Enter an email address, e.g. ana@example.com.';
    return { body: { email, name, role: form.role }, errors };
  }
  const body: UserUpdate = {};
  if (name !== editing.item.name) body.name = name;
  if (form.role !== editing.item.role) body.role = form.role;
  return { body, errors };
}

export class VpUsersPage extends ResourcePage<User, UserForm, Partial<UserCreate>, User | UserCreated> {
  static override properties = {
    error: { state: true },
    busyId: { state: true },
    created: { state: true },
    copyStatus: { state: true },
  };
  declare error: string | null;
  declare busyId: string | null;
  /** The new user and their one-time password, only while its dialog is open. */
  declare created: UserCreated | null;
  declare copyStatus: string;

  protected override readonly formId = 'user-form';
  protected readonly failed = { load: 'Could not load the users.', save: 'Could not save the user.', delete: 'Could not deactivate the user.' };

  constructor() {
    super();
    this.error = null;
    this.busyId = null;
    this.created = null;
    this.copyStatus = '';
  }

  protected override emptyForm(): UserForm {
    return { email: '', name: '', role: 'viewer' };
  }

  protected async fetchAll(): Promise<void> {
    this.items = (await api.listUsers()).items;
  }

  protected override openCreate(): void {
    this.openForm({ mode: 'create' }, this.emptyForm());
  }

  private openEdit(user: User): void {
    this.openForm({ mode: 'edit', item: user }, { email: user.email, name: user.name, role: user.role });
  }

  protected override prepare(editing: Editing): Prepared<Partial<UserCreate>, User | UserCreated> {
    const { body, errors } = userBody(this.form, editing);
    if (editing.mode === 'create') return { body, errors, send: () => api.createUser(body as UserCreate) };
    return { body, errors, send: () => api.updateUser(editing.item.id, body) };
  }

  protected override saved(saved: User | UserCreated, editing: Editing): void {
    if (editing.mode === 'create' && 'password' in saved) {
      this.created = saved;
      this.copyStatus = '';
    } else this.notice = `User ${saved.email} updated.`;
  }

  private closeCreated(): void {
    const email = this.created?.email;
    this.created = null; // the page's only copy of the one-time password goes here
    this.copyStatus = '';
    if (email) this.notice = `User ${email} created. They choose their own password when they first sign in.`;
  }

  protected override removeItem(user: User): Promise<void> {
    return api.updateUser(user.id, { active: false }).then(() => undefined);
  }

  protected override deleted(user: User): void {
    this.notice = `User ${user.email} deactivated: they are signed out and cannot sign in.`;
  }

  private async reactivate(user: User): Promise<void> {
    this.busyId = user.id;
    this.error = null;
    this.notice = null;
    try {
      await api.updateUser(user.id, { active: true });
      await this.load(); // the notice comes with the re-read list, never before the row says so
      this.notice = `User ${user.email} reactivated: they can sign in again.`;
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Could not reactivate the user.';
    } finally {
      this.busyId = null;
    }
  }

  /** The roles the signed-in user may give: only an owner makes owners (or changes one). */
  private rolesOffered(): readonly UserRole[] {
    return currentRole() === 'owner' ? ROLES : ROLES.filter((r) => r !== 'owner');
  }

  private renderForm(editing: Editing) {
    const f = this.form;
    const roles = editing.mode === 'edit' && !this.rolesOffered().includes(editing.item.role) ? [editing.item.role, ...this.rolesOffered()] : this.rolesOffered();
    return html`${errorBanner(this.formError)}
      <form id=${this.formId} novalidate @submit=${(e: Event) => this.save(e)}>
        ${editing.mode === 'create'
          ? field({ id: 'user-email', label: 'Email', error: this.errors.email, required: true, hint: 'They sign in with it.' }, (a) =>
              html`<input id=${a.id} type="email" autocomplete="off" .value=${f.email} maxlength="320" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
                aria-invalid=${a.invalid} autofocus @input=${(e: Event) => this.set({ email: (e.target as HTMLInputElement).value }, 'email')} />`,
            )
          : html`<p>Email <strong>${editing.item.email}</strong></p>`}
        ${field({ id: 'user-name', label: 'Name', error: this.errors.name, required: true }, (a) =>
          html`<input id=${a.id} .value=${f.name} maxlength="200" aria-required="true" aria-describedby=${a.describedBy ?? nothing}
            aria-invalid=${a.invalid} @input=${(e: Event) => this.set({ name: (e.target as HTMLInputElement).value }, 'name')} />`,
        )}
        ${field({ id: 'user-role', label: 'Role', error: this.errors.role, hint: ROLE_HINT[f.role] }, (a) =>
          html`<select id=${a.id} aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid}
            @change=${(e: Event) => this.set({ role: (e.target as HTMLSelectElement).value as UserRole }, 'role')}>
            ${roles.map((r) => html`<option value=${r} .selected=${r === f.role}>${r}</option>`)}
          </select>`,
        )}
      </form>`;
  }

  private renderList() {
    const state = this.renderListState('Loading users…');
    if (state || !this.items) return state;
    const canChange = this.may('PATCH /api/v1/users/{id}');
    return html`<div class="table-wrap"><table aria-label="Users">
      <thead><tr>
        <th scope="col">Email</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Status</th>
        <th scope="col">Last sign-in</th><th scope="col"><span class="sr-only">Actions</span></th>
      </tr></thead>
      <tbody>
        ${this.items.map(
          (u) => html`<tr data-user-id=${u.id} data-email=${u.email}>
            <td>${u.email}</td>
            <td>${u.name}</td>
            <td data-role=${u.role}>${u.role}</td>
            <td><vp-status-badge status=${u.active ? 'active' : 'inactive'}></vp-status-badge>
              ${u.must_change_password && u.active ? html` <span class="hint" data-badge="one-time">one-time password</span>` : nothing}</td>
            <td>${formatDateTime(u.last_login_at, 'Never')}</td>
            <td class="row-actions">${canChange
              ? html`<button class="small" aria-label="Edit ${u.email}" @click=${() => this.openEdit(u)}>Edit</button>
                  ${u.active
                    ? this.renderDeleteButton(u, u.email, 'Deactivate')
                    : html`<button class="small" aria-label="Reactivate ${u.email}" ?disabled=${this.busyId === u.id} @click=${() => this.reactivate(u)}>Reactivate</button>`}`
              : nothing}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>`;
  }

  override render() {
    const editing = this.editing;
    const created = this.created;
    return html`${this.renderHead('Users', 'Who may sign in to the console and the admin API, and what each role may do (docs/roles.md).', 'New user', 'POST /api/v1/users')}
      ${errorBanner(this.error)}
      ${this.renderList()}

      ${this.renderFormDialog(editing?.mode === 'edit' ? `Edit user ${editing.item.email}` : 'New user', 'Create user', (e) => this.renderForm(e))}

      ${this.renderDeleteDialog('Deactivate this user?', 'Deactivate user', (u) =>
        html`<p><strong>${u.email}</strong> is signed out at once and cannot sign in until reactivated.</p>${errorBanner(this.deleteError)}`,
      )}

      <vp-dialog
        heading="Copy the one-time password"
        .open=${created !== null}
        @vp-close=${() => this.closeCreated()}
        .content=${created
          ? secretContent({
              id: 'created-password',
              warning: 'This is the only time the password is shown. Give it to the user: they choose their own when they first sign in.',
              label: `One-time password for ${created.email}`,
              value: created.password,
              copyStatus: this.copyStatus,
              onCopy: async () => (this.copyStatus = await copySecret(created.password, 'created-password', 'password')),
            })
          : nothing}
        .actions=${html`<button @click=${() => this.closeCreated()}>I have copied the password</button>`}
      ></vp-dialog>`;
  }
}
customElements.define('vp-users-page', VpUsersPage);
