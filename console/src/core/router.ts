// History API routing. `matchRoute` is pure (unit-tested); `navigate` and `startRouter` touch the
// browser. Links are plain <a href>: one document-level click handler turns them into pushState.

type RouteName = 'login' | 'changePassword' | 'users' | 'audit' | 'dashboard' | 'apiKeys' | 'bots' | 'botNew' | 'botEdit' | 'botTestCall' | 'botTests' | 'calls' | 'callDetail' | 'trunks' | 'inboundNumbers' | 'webhooks' | 'dnc' | 'knowledge' | 'campaigns' | 'campaignDetail' | 'notFound';

export interface Route {
  name: RouteName;
  params: Record<string, string>;
  query: URLSearchParams;
  path: string;
}

// Order matters: `/bots/new` before `/bots/:id`.
const TABLE: Array<[RouteName, RegExp, string[]]> = [
  ['login', /^\/login$/, []],
  ['changePassword', /^\/change-password$/, []],
  ['users', /^\/users$/, []],
  ['audit', /^\/audit$/, []],
  ['dashboard', /^\/$/, []],
  ['apiKeys', /^\/api-keys$/, []],
  ['bots', /^\/bots$/, []],
  ['botNew', /^\/bots\/new$/, []],
  ['botEdit', /^\/bots\/([^/]+)$/, ['id']],
  ['botTestCall', /^\/bots\/([^/]+)\/test-call$/, ['id']],
  ['botTests', /^\/bots\/([^/]+)\/tests$/, ['id']],
  ['calls', /^\/calls$/, []],
  ['callDetail', /^\/calls\/([^/]+)$/, ['id']],
  ['trunks', /^\/trunks$/, []],
  ['inboundNumbers', /^\/inbound-numbers$/, []],
  ['webhooks', /^\/webhooks$/, []],
  ['dnc', /^\/do-not-call$/, []],
  ['knowledge', /^\/knowledge$/, []],
  ['campaigns', /^\/campaigns$/, []],
  ['campaignDetail', /^\/campaigns\/([^/]+)$/, ['id']],
];

/** Resolves a URL path (with optional query) to a route; a trailing slash is ignored. */
export function matchRoute(url: string): Route {
  const [rawPath = '/', search = ''] = url.split('?', 2);
  const path = rawPath.length > 1 ? rawPath.replace(/\/+$/, '') : rawPath;
  const query = new URLSearchParams(search);
  for (const [name, re, keys] of TABLE) {
    const m = re.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    keys.forEach((k, i) => {
      params[k] = decodeURIComponent(m[i + 1]!);
    });
    return { name, params, query, path };
  }
  return { name: 'notFound', params: {}, query, path };
}

/** Routes an anonymous visitor may see. */
export const isPublic = (name: RouteName): boolean => name === 'login';

/** A same-origin path to come back to after login; anything else falls back to the dashboard. */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') && !next.startsWith('/change-password') ? next : '/';
}

type Listener = (route: Route) => void;
let listener: Listener | undefined;

const current = (): Route => matchRoute(location.pathname + location.search);

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search && !opts.replace) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  listener?.(current());
}

export function startRouter(onRoute: Listener): void {
  listener = onRoute;
  window.addEventListener('popstate', () => onRoute(current()));
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = e.composedPath().find((n): n is HTMLAnchorElement => n instanceof HTMLAnchorElement);
    if (!a || a.target || a.hasAttribute('download') || a.origin !== location.origin) return;
    e.preventDefault();
    navigate(a.pathname + a.search);
  });
  onRoute(current());
}
