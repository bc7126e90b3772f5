// The admin JWT lives in sessionStorage: it ends with the browser tab, and never reaches localStorage.
import { setCurrentRole } from './permissions.js';

const TOKEN = 'vp.token';
const EXPIRES = 'vp.token_expires_at_ms';
const NOTICE = 'vp.login_notice';

export function saveToken(token: string, expiresInSeconds: number): void {
  sessionStorage.setItem(TOKEN, token);
  sessionStorage.setItem(EXPIRES, String(Date.now() + expiresInSeconds * 1000));
}

/** The token while it has not expired by our own clock; the backend's verdict still wins (401). */
export function currentToken(): string | null {
  const token = sessionStorage.getItem(TOKEN);
  const expiresAtMs = Number(sessionStorage.getItem(EXPIRES) ?? 0);
  if (!token) return null;
  if (expiresAtMs && Date.now() >= expiresAtMs) {
    endSession('Your session has expired. Please sign in again.');
    return null;
  }
  return token;
}

/** Drops the token; `notice` is shown once on the login page. */
export function endSession(notice?: string): void {
  sessionStorage.removeItem(TOKEN);
  sessionStorage.removeItem(EXPIRES);
  setCurrentRole(null);
  if (notice) sessionStorage.setItem(NOTICE, notice);
}

export function takeLoginNotice(): string | null {
  const notice = sessionStorage.getItem(NOTICE);
  sessionStorage.removeItem(NOTICE);
  return notice;
}
