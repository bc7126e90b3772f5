import { Value } from '@sinclair/typebox/value';
import { ERROR_CODE_PATTERN, ERROR_CODES, ErrorBody, ErrorResponse, errorBody, isErrorCode, parseErrorBody } from './errors.js';

describe('the error catalogue', () => {
  it('gives every code an error status, a meaning and a message, and a name the body pattern allows', () => {
    const pattern = new RegExp(ERROR_CODE_PATTERN);
    for (const [code, e] of Object.entries(ERROR_CODES)) {
      expect([code, pattern.test(code), e.status >= 400 && e.status <= 599, e.meaning.length > 0, e.message.length > 0]).toEqual([code, true, true, true, true]);
    }
    expect(ERROR_CODES.bot_not_found.status).toBe(404);
    expect(ERROR_CODES.service_unavailable.status).toBe(503);
    expect(isErrorCode('bot_inactive')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
  });

  it('builds the documented body, with details only when given', () => {
    expect(JSON.stringify(errorBody('bot_not_found', 'bot not found'))).toBe('{"error":{"code":"bot_not_found","message":"bot not found"}}');
    const body = errorBody('variables_mismatch', 'no', { missing: ['a'], unknown: [] });
    expect(JSON.stringify(body)).toBe('{"error":{"code":"variables_mismatch","message":"no","details":{"missing":["a"],"unknown":[]}}}');
    expect(Value.Check(ErrorBody, body)).toBe(true);
  });
});

describe('parseErrorBody', () => {
  it('reads a valid body, as text or as parsed JSON', () => {
    const text = '{"error":{"code":"validation_failed","message":"the request is invalid","details":[{"field":"name","message":"is required"}]}}';
    const parsed = { status: 422, code: 'validation_failed', message: 'the request is invalid', details: [{ field: 'name', message: 'is required' }], known: true };
    expect(parseErrorBody(422, text)).toEqual(parsed);
    expect(parseErrorBody(422, JSON.parse(text))).toEqual(parsed);
    expect(parseErrorBody(404, '{"error":{"code":"bot_not_found","message":"bot not found"}}')).toEqual({ status: 404, code: 'bot_not_found', message: 'bot not found', known: true });
  });

  it('gives null for a body that is not JSON', () => {
    expect(parseErrorBody(502, '<html>Bad Gateway</html>')).toBeNull();
    expect(parseErrorBody(500, '')).toBeNull();
    expect(parseErrorBody(500, undefined)).toBeNull();
    expect(parseErrorBody(500, null)).toBeNull();
  });

  it('gives null for JSON of another shape', () => {
    for (const body of ['{}', '[]', '"error"', '{"error":"boom"}', '{"error":{"code":404,"message":"x"}}', '{"error":{"code":"not_found"}}', '{"error":{"message":"x"}}', '{"error":null}']) {
      expect([body, parseErrorBody(400, body)]).toEqual([body, null]);
    }
  });

  it('keeps a code the catalogue does not know, as sent', () => {
    expect(parseErrorBody(418, { error: { code: 'teapot', message: 'I am one' } })).toEqual({ status: 418, code: 'teapot', message: 'I am one', known: false });
  });
});

describe('ErrorResponse', () => {
  it('is an Error with the answer’s status, code and details', () => {
    const err = new ErrorResponse(409, 'conflict', 'changed', { status: 'running' });
    expect(err).toBeInstanceOf(Error);
    expect([err.status, err.code, err.message, err.details, err.name]).toEqual([409, 'conflict', 'changed', { status: 'running' }, 'ErrorResponse']);
  });
});
