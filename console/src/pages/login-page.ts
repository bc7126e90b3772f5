// Sign-in. Shows why the user landed here (expired session, sign-out) once, then returns to the deep
// link that sent them here.
import { html, nothing } from 'lit';
import { LightElement } from '../components/base.js';
import { errorBanner, field } from '../components/field.js';
import { api, ApiError } from '../core/api.js';
import { navigate, safeNext } from '../core/router.js';
import { takeLoginNotice } from '../core/session.js';

export class VpLoginPage extends LightElement {
  static override properties = {
    next: { attribute: false },
    email: { state: true },
    password: { state: true },
    errors: { state: true },
    error: { state: true },
    notice: { state: true },
    busy: { state: true },
  };
  declare next: string | null;
  declare email: string;
  declare password: string;
  declare errors: Record<string, string>;
  declare error: string | null;
  declare notice: string | null;
  declare busy: boolean;

  constructor() {
    super();
    this.next = null;
    this.email = '';
    this.password = '';
    this.errors = {};
    this.error = null;
    this.notice = takeLoginNotice();
    this.busy = false;
  }

  private async submit(e: Event): Promise<void> {
    e.preventDefault();
    // The backend's login schema: email 3–320 characters, a non-empty password.
    const errors: Record<string, string> = {};
    if (this.email.trim().length < 3) errors.email = 'Enter your email address.';
    if (!this.password) errors.password = 'Enter your password.';
    this.errors = errors;
    if (Object.keys(errors).length) {
      this.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
      return;
    }
    this.busy = true;
    this.error = null;
    try {
      const { must_change_password } = await api.login(this.email.trim(), this.password);
      const next = safeNext(this.next);
      // A one-time password: a new one first, then where the user was going.
      navigate(must_change_password ? `/change-password?next=${encodeURIComponent(next)}` : next, { replace: true });
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : 'Sign-in failed.';
    } finally {
      this.busy = false;
    }
  }

  override render() {
    return html`<div class="login-wrap">
      <main class="login-card" id="main">
        <h1 tabindex="-1">Sign in to the Voice Platform console</h1>
        ${this.notice ? html`<div class="banner banner-info" role="status">${this.notice}</div>` : nothing} ${errorBanner(this.error)}
        <form novalidate @submit=${this.submit}>
          ${field({ id: 'login-email', label: 'Email', error: this.errors.email, required: true }, (a) =>
            html`<input id=${a.id} type="email" autocomplete="username" .value=${this.email} aria-describedby=${a.describedBy ?? nothing}
              aria-invalid=${a.invalid} aria-required="true" @input=${(e: Event) => (this.email = (e.target as HTMLInputElement).value)} />`,
          )}
          ${field({ id: 'login-password', label: 'Password', error: this.errors.password, required: true }, (a) =>
            html`<input id=${a.id} type="password" autocomplete="current-password" .value=${this.password}
              aria-describedby=${a.describedBy ?? nothing} aria-invalid=${a.invalid} aria-required="true"
              @input=${(e: Event) => (this.password = (e.target as HTMLInputElement).value)} />`,
          )}
          <button class="primary" type="submit" ?disabled=${this.busy}>${this.busy ? 'Signing in…' : 'Sign in'}</button>
        </form>
      </main>
    </div>`;
  }
}
customElements.define('vp-login-page', VpLoginPage);
