import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the receiver verifies with the
 * off-the-shelf `standardwebhooks` package. Secrets are `whsec_` + base64 of 32 random bytes (the
 * scheme allows 24 to 64; 32 matches the HMAC-SHA256 block it keys).
 */
const SECRET_BYTES = 32;
const SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

// A type, not an interface, so it is a Record<string, string> as HTTP clients take headers.
export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/**
 * The headers of one attempt. Every secret given signs (space-separated, as the scheme allows), so
 * during a secret roll a receiver holding either the old or the new secret verifies.
 */
export function signedHeaders(secrets: readonly string[], id: string, nowMs: number, body: string): SignedHeaders {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signature(s, id, timestamp, body)).join(' '),
  };
}

/**
 * `pos listen` signs what it forwards with a secret derived from the API key: stable across
 * sessions (a local app configures it once, as with `stripe listen`), never sent anywhere, and
 * useless for recovering the key.
 */
export function listenSecret(apiKey: string): string {
  return SECRET_PREFIX + createHmac('sha256', apiKey).update('pos listen signing secret').digest('base64');
}
