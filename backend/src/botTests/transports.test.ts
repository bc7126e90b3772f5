// Which transports a backend's runs place (docs/design.md §17): `room` only with LiveKit settings, `sip` only with
// them and the simulated phone's address;
// a case naming another is refused with 422 transport_unavailable saying why and listing what is available.
import { ApiError } from '../core/errors.js';
import { checkTestCase } from './routes.js';
import { availableTestTransports, testPhoneAddress } from './transports.js';

const LIVEKIT = { LIVEKIT_URL: 'ws://127.0.0.1:7880', LIVEKIT_API_KEY: 'devkey', LIVEKIT_API_SECRET: 'a-secret-of-at-least-thirty-two-characters' };
const PHONE = '10.1.2.3:5090';
const bot = { tools: [], llm: { provider: 'scripted' }, variables: [] } as unknown as Parameters<typeof checkTestCase>[0];
const roomCase = { name: 'in a room', transport: 'room' as const, caller: { script: [{ say: 'hello' }] }, expect: { end_reason: 'bot_hangup' as const } };

function refusal(fn: () => void): { status: number; code: string; message: string; details: unknown } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.status, code: err.code, message: err.message, details: err.details };
  }
}

describe('test transports', () => {
  it('room is available only where every LiveKit setting is set; sip also needs TEST_PHONE_SIP_ADDRESS', () => {
    expect(availableTestTransports({})).toEqual(['ws']);
    expect(availableTestTransports({ LIVEKIT_URL: LIVEKIT.LIVEKIT_URL, LIVEKIT_API_KEY: LIVEKIT.LIVEKIT_API_KEY })).toEqual(['ws']);
    expect(availableTestTransports(LIVEKIT)).toEqual(['ws', 'room']);
    expect(availableTestTransports({ TEST_PHONE_SIP_ADDRESS: PHONE })).toEqual(['ws']);
    expect(availableTestTransports({ ...LIVEKIT, TEST_PHONE_SIP_ADDRESS: PHONE })).toEqual(['ws', 'room', 'sip']);
    expect(testPhoneAddress({ ...LIVEKIT, TEST_PHONE_SIP_ADDRESS: PHONE })).toEqual({ host: '10.1.2.3', port: 5090 });
  });

  it('a room case without LiveKit settings: 422 transport_unavailable naming the settings', () => {
    expect(refusal(() => checkTestCase(bot, roomCase, availableTestTransports({})))).toEqual({
      status: 422,
      code: 'transport_unavailable',
      message: "transport room is not available on this backend: a room case joins the call's LiveKit room, which needs LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET",
      details: { field: 'transport', available: ['ws'] },
    });
  });

  it('with LiveKit settings but no phone a sip case is refused naming the setting; with the phone it is accepted', () => {
    expect(refusal(() => checkTestCase(bot, roomCase, availableTestTransports(LIVEKIT)))).toBeNull();
    expect(refusal(() => checkTestCase(bot, { ...roomCase, transport: 'sip' }, availableTestTransports(LIVEKIT)))).toEqual({
      status: 422,
      code: 'transport_unavailable',
      message: 'transport sip is not available on this backend: a SIP case dials the simulated phone, which needs TEST_PHONE_SIP_ADDRESS and the LIVEKIT_* settings',
      details: { field: 'transport', available: ['ws', 'room'] },
    });
    expect(refusal(() => checkTestCase(bot, { ...roomCase, transport: 'sip' }, availableTestTransports({ ...LIVEKIT, TEST_PHONE_SIP_ADDRESS: PHONE })))).toBeNull();
  });
});
