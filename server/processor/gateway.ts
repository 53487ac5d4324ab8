import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import type { Clock } from '../../shared/time.js';
import type { Mode } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { ApiError } from '../errors.js';
import { fromProcessorError } from './errors.js';
import { budgetedHttpClient } from './budget-client.js';
import type { ProcessorDirectory } from '../accounts/merchants.js';
import type { ProcessorConnection } from './connection.js';

/**
 * The processor calls are one HTTP round trip each; 20 s is well past Stripe's slowest documented
 * operations (card authorisations hold up to ~15 s) and keeps a stuck call from holding a request
 * for the SDK's default 80 s.
 */
const PROCESSOR_TIMEOUT_MS = 20_000;

/**
 * Retries inside the SDK, on network errors and 409/429/5xx. Every mutating call carries an
 * idempotency key, so a retry cannot charge twice; two retries ride out a processor blip without
 * making a counter wait long.
 */
const PROCESSOR_RETRIES = 2;

const WEBHOOK_SETTING = (mode: Mode) => `webhook_endpoint_${mode}`;

/** Events the server listens to; everything it learns about outcomes arrives as one of these. */
export const PROCESSOR_EVENTS = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.processing',
  'payment_intent.requires_action',
  'payment_intent.amount_capturable_updated',
  'charge.refunded',
  'charge.succeeded',
  'refund.created',
  'refund.updated',
  'refund.failed',
  'terminal.reader.action_succeeded',
  'terminal.reader.action_failed',
  'capability.updated',
  'account.updated',
] as const;

/**
 * Idempotency keys sent to the processor are derived, never random: the same (merchant, mode,
 * client key, step) always yields the same key, so a retry after a crash between the processor call
 * and our commit lands on the object the first attempt created.
 */
export function processorIdempotencyKey(...parts: string[]): string {
  return `pos_${createHash('sha256').update(parts.join('\u001f')).digest('hex').slice(0, 48)}`;
}

export class ProcessorGateway implements ProcessorDirectory {
  readonly name: string;
  readonly kind: ProcessorConnection['kind'];
  readonly #clients: Partial<Record<Mode, Stripe>> = {};
  readonly #connection: ProcessorConnection;
  /** Connected accounts by merchant and mode: a merchant's account never changes once made. */
  readonly #accounts = new Map<string, string>();

  constructor(
    connection: ProcessorConnection,
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    this.#connection = connection;
    this.kind = connection.kind;
    this.name = connection.kind === 'simulator' ? 'stripe-simulator' : 'stripe';
    for (const mode of ['test', 'live'] as const) {
      const key = connection.secretKeys[mode];
      if (!key) continue;
      this.#clients[mode] = new Stripe(key, {
        maxNetworkRetries: PROCESSOR_RETRIES,
        timeout: PROCESSOR_TIMEOUT_MS,
        appInfo: { name: 'pos' },
        ...(connection.unlimited ? {} : { httpClient: budgetedHttpClient(key, store) }),
        ...(connection.endpoint ?? {}),
      });
    }
  }

  /** The SDK client for a mode; a mode without keys is a configuration error the caller sees. */
  client(mode: Mode): Stripe {
    const client = this.#clients[mode];
    if (!client) {
      throw new ApiError(503, 'api_error', `The platform has no ${mode}-mode processor key configured`, { code: 'processor_not_configured' });
    }
    return client;
  }

  publishableKey(mode: Mode): string | null {
    return this.#connection.publishableKeys[mode] ?? null;
  }

  browserUrl(): string | null {
    return this.#connection.browserUrl ?? null;
  }

  async connectedAccountId(merchantId: string, mode: Mode): Promise<string | null> {
    return this.ensureConnectedAccount(merchantId, mode);
  }

  /**
   * The merchant's connected account in this mode, created on first need. Creation is keyed by
   * merchant and mode, so two requests racing here (or a crash before the insert) reuse the
   * account the processor already made instead of creating a second one.
   */
  async ensureConnectedAccount(merchantId: string, mode: Mode): Promise<string> {
    const known = this.#accounts.get(`${merchantId}:${mode}`);
    if (known) return known;
    const existing = await this.store.db
      .selectFrom('processor_accounts')
      .select('account_id')
      .where('merchant_id', '=', merchantId)
      .where('mode', '=', mode)
      .executeTakeFirst();
    if (existing) {
      this.#accounts.set(`${merchantId}:${mode}`, existing.account_id);
      return existing.account_id;
    }
    const merchant = await this.store.db.selectFrom('merchants').select(['business_name']).where('id', '=', merchantId).executeTakeFirstOrThrow();
    let account: Stripe.Account;
    try {
      account = await this.client(mode).accounts.create(
        {
          type: 'custom',
          country: 'US',
          business_profile: { name: merchant.business_name },
          capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
          metadata: { pos_merchant_id: merchantId },
        },
        { idempotencyKey: processorIdempotencyKey('account', merchantId, mode) },
      );
    } catch (err) {
      throw fromProcessorError(err);
    }
    await this.store.db
      .insertInto('processor_accounts')
      .values({ merchant_id: merchantId, mode, account_id: account.id, created_at: this.clock.now() })
      .onConflict((oc) => oc.columns(['merchant_id', 'mode']).doNothing())
      .execute();
    return account.id;
  }

  /** Creates connected accounts for merchants that have none yet (e.g. made by the admin CLI). */
  async provisionMissingAccounts(): Promise<number> {
    let created = 0;
    for (const mode of ['test', 'live'] as const) {
      if (!this.#clients[mode]) continue;
      const missing = await this.store.db
        .selectFrom('merchants')
        .select('id')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('processor_accounts').select('account_id').whereRef('processor_accounts.merchant_id', '=', 'merchants.id').where('processor_accounts.mode', '=', mode))),
        )
        .execute();
      for (const { id } of missing) {
        await this.ensureConnectedAccount(id, mode);
        created += 1;
      }
    }
    return created;
  }

  /**
   * Simulator only: point the processor's webhook endpoint for each mode at this server. The
   * endpoint and its secret are kept, and only the URL is updated on a restart, so events the
   * processor is still retrying reach the new address under the same secret.
   */
  async registerWebhookEndpoint(url: string): Promise<void> {
    for (const mode of ['test', 'live'] as const) {
      const client = this.#clients[mode];
      if (!client) continue;
      const saved = await this.store.db.selectFrom('processor_settings').select('value').where('name', '=', WEBHOOK_SETTING(mode)).executeTakeFirst();
      let endpoint: { id: string; secret: string } | undefined = saved ? (JSON.parse(saved.value) as { id: string; secret: string }) : undefined;
      if (endpoint) {
        try {
          await client.webhookEndpoints.update(endpoint.id, { url, disabled: false });
        } catch (err) {
          if (!(err instanceof Stripe.errors.StripeInvalidRequestError)) throw err;
          endpoint = undefined;
        }
      }
      if (!endpoint) {
        const created = await client.webhookEndpoints.create({ url, enabled_events: [...PROCESSOR_EVENTS], description: 'pos server' });
        endpoint = { id: created.id, secret: created.secret ?? '' };
        const value = JSON.stringify(endpoint);
        await this.store.db
          .insertInto('processor_settings')
          .values({ name: WEBHOOK_SETTING(mode), value })
          .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
          .execute();
      }
      if (!this.#connection.webhookSecrets.includes(endpoint.secret)) this.#connection.webhookSecrets.push(endpoint.secret);
    }
  }

  /**
   * Verifies a processor event's signature against every configured secret. Throws when none
   * matches: a forged or altered event changes nothing.
   */
  verifyEvent(rawBody: Buffer, signature: string | undefined): Stripe.Event {
    if (!signature) throw new ApiError(400, 'invalid_request_error', 'Missing Stripe-Signature header', { code: 'signature_missing' });
    const client = this.#clients.test ?? this.#clients.live;
    if (!client) throw new ApiError(503, 'api_error', 'No processor configured', { code: 'processor_not_configured' });
    for (const secret of this.#connection.webhookSecrets) {
      try {
        return client.webhooks.constructEvent(rawBody, signature, secret);
      } catch (err) {
        if (!(err instanceof Stripe.errors.StripeSignatureVerificationError)) throw err;
      }
    }
    throw new ApiError(400, 'invalid_request_error', 'Processor event signature verification failed', { code: 'signature_invalid' });
  }
}
