import Stripe from 'stripe';
import { budgetedHttpClient } from '../../server/processor/budget-client.js';
import { openTestDb } from './db.js';
import type { TestServer } from './server.js';

/** The outbox events written about one object, in order. */
export async function eventsOf(dataDir: string, objectId: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const db = await openTestDb(dataDir);
  try {
    const rows = await db.all<{ type: string; data: string }>('select type, data from events where object_id = ? order by seq', objectId);
    return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) as Record<string, unknown> }));
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
