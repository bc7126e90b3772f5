// How the admin routes that change LiveKit (outbound trunks, inbound numbers) answer when it is missing
// or failing: 503, with our words (LiveKit's own text stays out), retryable.
import { apiError } from '../core/errors.js';
import type { Services } from '../core/deps.js';
import { TelephonyError, type Telephony } from '../core/telephony.js';

/** LiveKit trouble is the caller's to retry: 503 `service_unavailable`; anything else is rethrown. */
export function telephonyUnavailable(err: unknown): never {
  if (err instanceof TelephonyError) {
    throw apiError('service_unavailable', { message: 'the telephony service (LiveKit) is unavailable; retry later', headers: { 'Retry-After': '5' } });
  }
  throw err;
}

export function requireTelephony(svc: Services): Telephony {
  if (!svc.telephony) {
    throw apiError('service_unavailable', {
      message: 'the telephony plane is not configured on this backend (set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET)',
      headers: { 'Retry-After': '60' },
    });
  }
  return svc.telephony;
}
