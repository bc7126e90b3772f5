// Choose a new password: after signing in with a one-time password (login's must_change_password, or any
// call answering 403 password_change_required), before anything else. POST /api/v1/auth/password revokes
// the old token and answers a new one, which the session keeps; then on to where the user was going.
import { html, nothing } from 'lit';
import { MIN_PASSWORD_LENGTH } from '@voice-platform/schemas/users.js';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import { navigate, safeNext } from '../core/router.js';
import { endSession } from '../core/session.js';

export interface PasswordForm {
  current: string;
  next: string;
  repeat: string;
}

/** The form's problems by field (`current`, `next`, `repeat`), as the backend would refuse them and more. */
export function passwordFormErrors(f: PasswordForm): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!f.current) errors.current = 'Enter the password you signed in with.';
  if (f.next.length < MIN_PASSWORD_LENGTH) errors.next = `At least ${MIN_PASSWORD_LENGTH} characters.`;
  else if (f.next.length > 1024) errors.next = 'At most 1024 characters.';
  else if (f.next === f.current) errors.next = 'Choose a password other than the current one.';
  if (!errors.next && f.repeat !== f.next) errors.repeat = 'The two passwords differ.';
  return errors;
}

/** The backend's field names → the form's. */
const FIELD: Record<string, keyof PasswordForm> = { current_password: 'current', new_password: 'next' };

export class VpChangePasswordPage extends LightElement {
  static override properties = {
    next: { attribute: false },
    form: { state: true },
    errors: { state: true },
    error: { state: true },
    busy: { state: true },
  };
  declare next: string | null;
  declare form: PasswordForm;
  declare errors: Record<string, string>;
  declare error: string | null;
  declare busy: boolean;

  constructor() {
    super();
    this.next = null;
    this.form = { current: '', next: '', repeat: '' };
    this.errors = {};
    this.error = null;
    this.busy = false;
  }

  private set(patch: Partial<PasswordForm>): void {
    this.form = { ...this.form, ...patch };
    const key = Object.keys(patch)[0]!;
    if (this.errors[key]) this.errors = Object.fromEntries(Object.entries(this.errors).filter(([k]) => k !== key));
  }

  private async submit(e: Event): Promise<void> {
    e.preventDefault();
    if (this.busy) return;
    this.error = null;
    this.errors = passwordFormErrors(this.form);
    if (Object.keys(this.errors).length) {
      await this.updateComplete;
      this.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
      return;
    }
    this.busy = true;
    try {
      await api.changePassword(this.form.current, this.form.next);
      this.form = { current: '', next: '', repeat: '' };
      navigate(safeNext(this.next), { replace: true });
    } catch (err) {
      if (err instanceof ApiError) {
        this.errors = Object.fromEntries(Object.entries(err.fieldErrors).map(([k, v]) => [FIELD[k] ?? k, v]));
        this.error = err.message;
      } else this.error = 'Could not change the password.';
      await this.updateComplete;
      this.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
    } finally {
      this.busy = false;
    }
  }

  private input(id: string, key: keyof PasswordForm, label: string, autocomplete: string, hint?: string) {
    return field({ id, label, error: this.errors[key], hint, required: true }, (a) =>
      html`<input id=${a.id} type="password" autocomplete=${autocomplete} .value=${this.form[key]} aria-describedby=${a.describedBy ?? nothing}
        aria-invalid=${a.invalid} aria-required="true" @input=${(e: Event) => this.set({ [key]: (e.target as HTMLInputElement).value })} />`,
    );
  }

  override render() {
    return html`<div class="login-wrap">
      <main class="login-card" id="main">
        <h1 tabindex="-1">Choose a new password</h1>
        <p class="subtitle">You signed in with a one-time password. Choose your own before you go on.</p>
        ${errorBanner(this.error)}
        <form id="password-form" novalidate @submit=${this.submit}>
          ${this.input('password-current', 'current', 'Current password', 'current-password')}
          ${this.input('password-new', 'next', 'New password', 'new-password', `At least ${MIN_PASSWORD_LENGTH} characters.`)}
          ${this.input('password-repeat', 'repeat', 'New password again', 'new-password')}
          <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? 'Saving…' : 'Change password'}</button>
        </form>
        <p><button class="small" type="button" @click=${() => {
          endSession('You have signed out.');
          navigate('/login', { replace: true });
        }}>Sign out</button></p>
      </main>
    </div>`;
  }
}
customElements.define('vp-change-password-page', VpChangePasswordPage);
