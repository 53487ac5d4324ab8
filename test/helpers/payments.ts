import Stripe from 'stripe';
import { budgetedHttpClient } from '../../server/processor/stripe/budget-client.js';
import { openTestDb } from './db.js';
import { sealedPlace } from '../../server/db/encryption.js';
import { unpackJson } from '../../server/db/packed-json.js';
import { Keyring } from '../../shared/crypto/keyring.js';
import { keySourceOf } from '../../shared/crypto/key-source.js';
import type { TestServer } from './server.js';

/** The outbox events written about one object, in order (opened with the data dir's key file where sealed). */
export async function eventsOf(dataDir: string, objectId: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const db = await openTestDb(dataDir);
  try {
    const keyring = new Keyring(keySourceOf({ dataDir }));
    const rows = await db.all<{ id: string; type: string; data: string }>('select id, type, data from events where object_id = ? order by seq', objectId);
    return rows.map((r) => ({ type: r.type, data: JSON.parse(unpackJson(keyring.open(sealedPlace('events.data', r.id), r.data))) as Record<string, unknown> }));
  } finally {
    await db.close();
  }
}

/**
 * The SDK pointed at the embedded simulator, as the platform (secret key) or as a browser
 * (publishable key), on the processor budget of its key like the server's own calls: the test is
 * one more client of the platform account and keeps within its rate limits.
 */
export function simulatorSdk(t: TestServer, key?: string): Stripe {
  const sim = t.stack.simulator;
  if (!sim) throw new Error('no simulator');
  const apiKey = key ?? sim.keys.secretTest;
  return new Stripe(apiKey, { host: sim.host, port: sim.port, protocol: 'http', maxNetworkRetries: 0, httpClient: budgetedHttpClient(apiKey) });
}
