// Boot: the app shell (navigation + current page) and the router. Every non-public route needs a
// session; without one the user goes to /login and comes back to the deep link after signing in.
import { html, nothing } from 'lit';
import './styles.css';
import './components/dialog.js';
import './components/status-badge.js';
import './pages/login-page.js';
import './pages/change-password-page.js';
import './pages/users-page.js';
import './pages/audit-page.js';
import './pages/dashboard-page.js';
import './pages/api-keys-page.js';
import './pages/bots-page.js';
import './pages/bot-edit-page.js';
import './pages/test-call-page.js';
import './pages/bot-tests-page.js';
import './pages/calls-page.js';
import './pages/call-detail-page.js';
import './pages/trunks-page.js';
import './pages/inbound-numbers-page.js';
import './pages/webhooks-page.js';
import './pages/dnc-page.js';
import './pages/knowledge-page.js';
import './pages/campaigns-page.js';
import './pages/campaign-detail-page.js';
import { LightElement } from './components/base.js';
import { isPublic, navigate, startRouter, type Route } from './core/router.js';
import { currentToken, endSession } from './core/session.js';
import { api, ApiError } from './core/api.js';
import { currentRole, may, setCurrentRole } from './core/permissions.js';

const TITLES: Record<Route['name'], string> = {
  login: 'Sign in',
  changePassword: 'Choose a new password',
  users: 'Users',
  audit: 'Audit log',
  dashboard: 'Dashboard',
  apiKeys: 'API keys',
  bots: 'Bots',
  botNew: 'New bot',
  botEdit: 'Edit bot',
  botTestCall: 'Test call',
  botTests: 'Bot tests',
  calls: 'Calls',
  callDetail: 'Call',
  trunks: 'Outbound trunks',
  inboundNumbers: 'Inbound numbers',
  webhooks: 'Webhooks',
  dnc: 'Do-not-call list',
  knowledge: 'Knowledge bases',
  campaigns: 'Campaigns',
  campaignDetail: 'Campaign',
  notFound: 'Not found',
};

/** href, label, the routes it is current for, and the operation its page reads (shown to the roles that may call it). */
const NAV: Array<[string, string, Array<Route['name']>, string]> = [
  ['/', 'Dashboard', ['dashboard'], 'GET /api/v1/calls'],
  ['/api-keys', 'API keys', ['apiKeys'], 'GET /api/v1/api-keys'],
  ['/bots', 'Bots', ['bots', 'botNew', 'botEdit', 'botTestCall', 'botTests'], 'GET /api/v1/bots'],
  ['/calls', 'Calls', ['calls', 'callDetail'], 'GET /api/v1/calls'],
  ['/trunks', 'Trunks', ['trunks'], 'GET /api/v1/sip/outbound-trunks'],
  ['/inbound-numbers', 'Inbound numbers', ['inboundNumbers'], 'GET /api/v1/sip/inbound-numbers'],
  ['/knowledge', 'Knowledge', ['knowledge'], 'GET /api/v1/knowledge-bases'],
  ['/campaigns', 'Campaigns', ['campaigns', 'campaignDetail'], 'GET /api/v1/campaigns'],
  ['/webhooks', 'Webhooks', ['webhooks'], 'GET /api/v1/webhooks'],
  ['/do-not-call', 'Do-not-call', ['dnc'], 'GET /api/v1/dnc'],
  ['/users', 'Users', ['users'], 'GET /api/v1/users'],
  ['/audit', 'Audit log', ['audit'], 'GET /api/v1/audit'],
];

/** Routes shown without the app shell (and without reading the user's role first). */
const BARE: ReadonlyArray<Route['name']> = ['login', 'changePassword'];

export class VpApp extends LightElement {
  static override properties = { route: { state: true }, me: { state: true }, meError: { state: true } };
  declare route: Route | null;
  /** The signed-in user (GET /api/v1/auth/me): its role decides what the navigation and pages offer. */
  declare me: { email: string; name: string; role: string } | null;
  declare meError: string | null;

  constructor() {
    super();
    this.route = null;
    this.me = null;
    this.meError = null;
  }

  /** Reads who is signed in (once a session): the pages render once the role is known. */
  private async loadMe(): Promise<void> {
    try {
      const me = await api.me();
      setCurrentRole(me.role);
      this.me = me;
      this.meError = null;
    } catch (err) {
      // 401 goes to sign in, 403 password_change_required to the password page (api.ts) and they come back.
      this.meError = err instanceof ApiError ? err.message : 'Could not read who is signed in.';
    }
  }

  override connectedCallback(): void {
    super.connectedCallback();
    startRouter((route) => this.onRoute(route));
  }

  private onRoute(route: Route): void {
    const token = currentToken();
    if (!isPublic(route.name) && !token) {
      navigate(`/login?next=${encodeURIComponent(route.path + (route.query.size ? `?${route.query}` : ''))}`, { replace: true });
      return;
    }
    if (route.name === 'login' && token) {
      navigate('/', { replace: true });
      return;
    }
    if (!BARE.includes(route.name) && (!this.me || !currentRole())) {
      this.me = null;
      void this.loadMe();
    }
    // Only the query changed (a filter chosen, back or forward on one page): the focus stays where it is.
    const samePage = this.route === null || this.route.path === route.path;
    this.route = route;
    document.title = `${TITLES[route.name]} · Voice Platform Console`;
    // Move focus to the new page's heading so screen readers announce the page change.
    if (!samePage) void this.updateComplete.then(() => requestAnimationFrame(() => this.querySelector<HTMLElement>('main h1')?.focus()));
  }

  private signOut(): void {
    endSession('You have signed out.');
    navigate('/login', { replace: true });
  }

  private page(route: Route) {
    switch (route.name) {
      case 'dashboard':
        return html`<vp-dashboard-page .query=${route.query}></vp-dashboard-page>`;
      case 'users':
        return html`<vp-users-page></vp-users-page>`;
      case 'audit':
        return html`<vp-audit-page></vp-audit-page>`;
      case 'apiKeys':
        return html`<vp-api-keys-page></vp-api-keys-page>`;
      case 'bots':
        return html`<vp-bots-page></vp-bots-page>`;
      case 'botNew':
        return html`<vp-bot-edit-page></vp-bot-edit-page>`;
      case 'botEdit':
        return html`<vp-bot-edit-page .botId=${route.params.id}></vp-bot-edit-page>`;
      case 'botTestCall':
        return html`<vp-test-call-page .botId=${route.params.id}></vp-test-call-page>`;
      case 'botTests':
        return html`<vp-bot-tests-page .botId=${route.params.id}></vp-bot-tests-page>`;
      case 'calls':
        return html`<vp-calls-page .query=${route.query}></vp-calls-page>`;
      case 'callDetail':
        return html`<vp-call-detail-page .callId=${route.params.id}></vp-call-detail-page>`;
      case 'trunks':
        return html`<vp-trunks-page></vp-trunks-page>`;
      case 'inboundNumbers':
        return html`<vp-inbound-numbers-page></vp-inbound-numbers-page>`;
      case 'webhooks':
        return html`<vp-webhooks-page></vp-webhooks-page>`;
      case 'dnc':
        return html`<vp-dnc-page></vp-dnc-page>`;
      case 'knowledge':
        return html`<vp-knowledge-page></vp-knowledge-page>`;
      case 'campaigns':
        return html`<vp-campaigns-page></vp-campaigns-page>`;
      case 'campaignDetail':
        return html`<vp-campaign-detail-page .campaignId=${route.params.id}></vp-campaign-detail-page>`;
      default:
        return html`<h1 tabindex="-1">Page not found</h1>
          <p class="subtitle">Nothing lives at <code>${route.path}</code>.</p>
          <a class="button primary" href="/">Go to the dashboard</a>`;
    }
  }

  override render() {
    const route = this.route;
    if (!route) return nothing;
    if (route.name === 'login') return html`<vp-login-page .next=${route.query.get('next')}></vp-login-page>`;
    if (route.name === 'changePassword') return html`<vp-change-password-page .next=${route.query.get('next')}></vp-change-password-page>`;
    const me = this.me;
    return html`<a class="skip-link" href="#main" @click=${(e: Event) => {
        e.preventDefault();
        this.querySelector<HTMLElement>('main h1')?.focus();
      }}>Skip to content</a>
      <div class="layout">
        <aside class="sidebar">
          <div class="brand">Voice Platform</div>
          <nav aria-label="Main">
            <ul>
              ${me
                ? NAV.filter(([, , , op]) => may(op)).map(
                    ([href, label, names]) =>
                      html`<li><a href=${href} aria-current=${names.includes(route.name) ? 'page' : nothing}>${label}</a></li>`,
                  )
                : nothing}
            </ul>
          </nav>
          <div class="account">
            ${me ? html`<p class="hint" data-testid="signed-in-as"><span class="account-email">${me.email}</span> · <span data-role=${me.role}>${me.role}</span></p>` : nothing}
            <button class="small" @click=${() => this.signOut()}>Sign out</button>
          </div>
        </aside>
        <main id="main">${me
          ? this.page(route)
          : this.meError
            ? html`<div class="banner banner-error" role="alert">${this.meError}</div>`
            : html`<p class="loading" role="status">Loading…</p>`}</main>
      </div>`;
  }
}
customElements.define('vp-app', VpApp);
