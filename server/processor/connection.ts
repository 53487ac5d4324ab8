import type { Mode } from '../db/schema.js';
import type { AccountPolicy } from './port.js';

/**
 * How to reach the processor. The same adapter code serves both kinds: for the simulator only the
 * host, port and protocol differ, and the server registers its own webhook endpoint on start.
 */
export interface ProcessorConnection {
  kind: 'simulator' | 'stripe';
  secretKeys: Record<Mode, string | undefined>;
  publishableKeys: Record<Mode, string | undefined>;
  /** Secrets that sign processor events (Stripe: from the dashboard). Simulator: filled on registration. */
  webhookSecrets: string[];
  /** Set for the simulator; Stripe's defaults otherwise. */
  endpoint?: { host: string; port: number; protocol: 'http' | 'https' };
  /** Where a browser reaches the processor's client-side API (the simulator's URL; Stripe.js otherwise). */
  browserUrl?: string;
  /**
   * The processor enforces no rate limits: a simulator told so (POS_SIMULATOR_RATE_LIMITS=off, for
   * throughput benchmarks and bulk fixtures). Calls then skip the budget (budget-client.ts). Never
   * set for Stripe itself.
   */
  unlimited?: boolean;
  /** The longest one call may take, budget waits and 429 retries included (default 20 s, stripe/processor.ts). */
  timeoutMs?: number;
  /** How connected accounts are made; default live `express` and test prefilled (port.ts). */
  accounts?: AccountPolicy;
}
