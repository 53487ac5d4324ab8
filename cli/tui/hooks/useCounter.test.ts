import { describe, expect, it } from 'vitest';
import { ApiRequestError } from '../../../shared/api/errors.js';
import { errorWords } from './useCounter.js';

describe('errorWords', () => {
  it('says plainly that the counter key cannot refund, and who can', () => {
    const err = new ApiRequestError(403, { type: 'permission_error', code: 'missing_scope', required_scope: 'refunds:write', message: 'This key lacks the `refunds:write` permission' });
    expect(errorWords(err)).toBe("This counter's key can't refund: the shop owner refunds with the secret key.");
  });

  it('names any other missing permission, and the secret key’s own work', () => {
    expect(errorWords(new ApiRequestError(403, { type: 'permission_error', code: 'missing_scope', required_scope: 'payouts:write', message: 'x' }))).toBe(
      "This counter's key can't do that (it lacks payouts:write): ask the shop owner.",
    );
    expect(errorWords(new ApiRequestError(403, { type: 'permission_error', code: 'secret_key_required', message: 'x' }))).toBe("Only the shop's secret key can do that: ask the shop owner.");
  });

  it('keeps the conflict words and the API’s own message otherwise', () => {
    expect(errorWords(new ApiRequestError(409, { type: 'invalid_request_error', code: 'already_refunded', message: 'x' }))).toBe('Already fully refunded.');
    expect(errorWords(new ApiRequestError(400, { type: 'invalid_request_error', code: 'parameter_invalid', message: 'Invalid amount' }))).toBe('Invalid amount');
  });
});
