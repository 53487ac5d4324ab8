import { z } from 'zod';
import { DRAWER_REASONS, READER_ACTIVITIES, ReaderPaymentSchema } from './agent-protocol.js';
import { RECEIPT_POLICIES } from './receipt-policy.js';

/**
 * The upstream protocol: what an on-premise agent and the server say over the one websocket the
 * agent keeps open (`GET /v1/agent/connect`, upgraded, `Authorization: Bearer rk_…` or `sk_…`). One JSON
 * object per message, validated on both ends. Written down in docs/agent-protocol.md.
 */

/**
 * The protocol agents of this version speak. 2 (pos 0.2.0): the welcome names the protocol and the
 * server's version and no longer carries `last_report_seq`, and `reports` are no longer accepted.
 */
export const UPSTREAM_PROTOCOL_VERSION = 2;

/**
 * What a server accepts: its own protocol and the one before, so agents can be upgraded after the
 * servers, shop by shop, rather than in lockstep with them (docs/agent-protocol.md, "Versions").
 */
export const UPSTREAM_PROTOCOLS_ACCEPTED: readonly number[] = [UPSTREAM_PROTOCOL_VERSION - 1, UPSTREAM_PROTOCOL_VERSION];
export const UPSTREAM_PATH = '/v1/agent/connect';

/**
 * Readers in one heartbeat. 1,000 is five times the largest shop we plan for (200 readers on one
 * agent) and keeps a heartbeat well under a megabyte.
 */
export const MAX_READERS_PER_HEARTBEAT = 1_000;

/** Reports in one `reports` message, as agents that still send them batch them. */
export const MAX_REPORTS_PER_MESSAGE = 500;

/**
 * Close codes the server ends an agent's connection with when the agent asked too much of it
 * (docs/agent-protocol.md, "Limits"). The agent's transport also turns an upgrade refused with HTTP
 * 429 into `rateLimited` (4000 + status), so both reach the same reaction.
 */
export const UPSTREAM_CLOSE = {
  /** Too many messages on the connection, or more waiting to be handled than the server keeps. */
  rateLimited: 4429,
  /** The hello named a new agent id, and the key already has as many agents as it may have. */
  agentLimit: 4409,
} as const;

/**
 * After closing a connection with `rateLimited` the server refuses that key's new connections for
 * this long, so a reconnect cannot start a fresh burst at once; the agent waits as long before it
 * tries again. A minute is long against a flood and short against a real shop's outage.
 */
export const RATE_LIMIT_COOL_OFF_MS = 60_000;

/** A reader as an agent names it: the processor's tmr_ id, or (serial readers) its serial number. */
export const ReaderRefSchema = z
  .object({
    processor_terminal_id: z.string().min(1).max(255).optional(),
    serial_number: z.string().min(1).max(255).optional(),
  })
  .strict()
  .refine((r) => r.processor_terminal_id !== undefined || r.serial_number !== undefined, 'a reader needs processor_terminal_id or serial_number');
export type ReaderRef = z.infer<typeof ReaderRefSchema>;

/**
 * Counter devices in one `devices` message. An agent drives a receipt printer and a customer
 * display today; 32 leaves room for a shop with several of each and keeps a report tiny.
 */
export const MAX_DEVICES_PER_REPORT = 32;

/**
 * A counter device as the agent reports it upstream: its state on the local websocket
 * (`DeviceState`, shared/agent-protocol.ts) without `last_seen_at`, which the server keeps by its
 * own clock. Every field is bounded: the server stores what it accepts as it is.
 */
export const UpstreamDeviceSchema = z
  .object({
    /** The agent's name for it, unique per agent (`printer`, `display`). */
    id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, _ . - (at most 64)'),
    kind: z.enum(['receipt_printer', 'customer_display']),
    /** How it is reached: a device path, usb:VID:PID or tcp:HOST:PORT. */
    target: z.string().min(1).max(300),
    status: z.enum(['online', 'offline']),
    last_error: z.string().max(500).nullable(),
    paper: z.enum(['ok', 'near_end', 'out']).nullable(),
    cover_open: z.boolean().nullable(),
    drawer_open: z.boolean().nullable(),
    queued: z.number().int().nonnegative().max(1_000_000).nullable(),
  })
  .strict();
export type UpstreamDevice = z.infer<typeof UpstreamDeviceSchema>;

/**
 * A reader activity as agents before the server pushed reader views saw it and reported it. The
 * server pushes each reader with its payment (`reader_state`), so it has nothing to learn from
 * these: it still accepts them, so such an agent is not refused and its queue drains, and keeps none.
 */
export const ReportSchema = z
  .object({
    seq: z.number().int().positive(),
    reader: ReaderRefSchema,
    activity: z.enum(READER_ACTIVITIES),
    transaction_id: z.string().max(255).nullable(),
    failure_code: z.string().max(255).nullable(),
    /** When the agent saw it (epoch ms, the agent's clock). */
    observed_at: z.number().int().nonnegative(),
  })
  .strict();
export type Report = z.infer<typeof ReportSchema>;

/** Drawer openings in one message; an agent that was offline sends its backlog in batches of this. */
export const MAX_DRAWER_OPENINGS_PER_MESSAGE = 100;

/**
 * A cash drawer the agent opened (the kick reached the printer), for the merchant's audit trail.
 * `id` is the agent's own for the opening: sent again until acknowledged, it is recorded once.
 */
export const DrawerOpeningSchema = z
  .object({
    id: z.uuid(),
    reason: z.enum(DRAWER_REASONS),
    /** Who opened it, as the counter said. */
    staff: z.string().min(1).max(100).nullable(),
    /** The cash sale or refund it was opened for. */
    transaction_id: z.string().min(1).max(255).nullable(),
    /** When the agent opened it (epoch ms, the agent's clock). */
    opened_at: z.number().int().nonnegative(),
  })
  .strict();
export type DrawerOpening = z.infer<typeof DrawerOpeningSchema>;

export const AgentUpMessageSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('hello'),
      /** Checked against UPSTREAM_PROTOCOLS_ACCEPTED by the server, which names them when it refuses one. */
      protocol: z.number().int(),
      agent_id: z.uuid(),
      name: z.string().min(1).max(200),
      version: z.string().min(1).max(50),
      heartbeat_ms: z.number().int().min(50).max(600_000),
      /** The last transaction event seq the agent has seen; null on its first connection. */
      cursor: z.number().int().nonnegative().nullable(),
    })
    .strict(),
  z
    .object({
      type: z.literal('heartbeat'),
      readers: z
        .array(z.object({ reader: ReaderRefSchema, status: z.enum(['online', 'offline']) }).strict())
        .max(MAX_READERS_PER_HEARTBEAT),
    })
    .strict(),
  /** Accepted from older agents and acknowledged, never stored (see ReportSchema); agents today do not send it. */
  z.object({ type: z.literal('reports'), reports: z.array(ReportSchema).min(1).max(MAX_REPORTS_PER_MESSAGE) }).strict(),
  /**
   * Every counter device the agent drives, as it is now: sent after each welcome and on each change.
   * The list is whole: a device the agent no longer lists is removed on the server.
   */
  z
    .object({
      type: z.literal('devices'),
      devices: z
        .array(UpstreamDeviceSchema)
        .max(MAX_DEVICES_PER_REPORT)
        .refine((devices) => new Set(devices.map((d) => d.id)).size === devices.length, 'device ids must be unique'),
    })
    .strict(),
  /** Cash drawers opened (no sale, cash sale, cash refund): written to the audit trail under the agent's key, then acknowledged. */
  z.object({ type: z.literal('drawer_opened'), openings: z.array(DrawerOpeningSchema).min(1).max(MAX_DRAWER_OPENINGS_PER_MESSAGE) }).strict(),
  /** The agent stops on purpose: its readers and devices go offline now rather than after the TTL. */
  z.object({ type: z.literal('goodbye') }).strict(),
]);
export type AgentUpMessage = z.infer<typeof AgentUpMessageSchema>;

export const PresenceReaderSchema = z.object({
  id: z.string(),
  processor_terminal_id: z.string(),
  serial_number: z.string(),
  name: z.string(),
  status: z.enum(['online', 'offline']),
  last_seen_at: z.string().nullable(),
});
export type PresenceReader = z.infer<typeof PresenceReaderSchema>;

/**
 * A reader's action as the server keeps it from the processor's events
 * (server/terminal/reader-actions.ts), pushed to the merchant's agents: the whole list after the
 * welcome, then each reader as it changes. `seq` grows with every change of the action of any
 * reader of the merchant and mode: a reader's push with a lower seq than one already applied is
 * older; one with the same seq says what became of the same action's payment.
 */
export const ReaderActionStateSchema = z.object({
  type: z.string(),
  status: z.enum(['in_progress', 'succeeded', 'failed', 'canceled']),
  payment_intent_id: z.string().nullable(),
  /** Our transaction for that payment intent, with its amount and currency, when there is one. */
  transaction_id: z.string().nullable(),
  amount: z.number().int().nullable(),
  currency: z.string().nullable(),
  /** A card was presented and is being authorised. */
  card_presented: z.boolean(),
  /** Why the action failed: a decline code, `customer_canceled` (the customer pressed cancel on the reader), … */
  failure_code: z.string().nullable(),
  failure_message: z.string().nullable(),
  updated_at: z.string(),
});
export type ReaderActionState = z.infer<typeof ReaderActionStateSchema>;

/**
 * A reader with its payment: the one view of a reader, joined on the server
 * (server/terminal/reader-view.ts) and shown as it is by the agent and the counter. The fields added
 * after the first agents (`status`, `last_seen_at`, `payment`) have defaults, so a push from an older
 * server still parses.
 */
export const ReaderStatePushSchema = z.object({
  id: z.string(),
  processor_terminal_id: z.string(),
  name: z.string(),
  serial_number: z.string(),
  /** The terminal location the reader stands at (its receipt policy comes with `locations`). */
  location_id: z.string().nullable().default(null),
  /** Presence as the processor last reported it (null: not known yet). */
  processor_status: z.enum(['online', 'offline']).nullable(),
  /** Presence as the counter shows it: the processor's word, a reader not reported yet counting as online. */
  status: z.enum(['online', 'offline']).default('online'),
  /** When the server last heard the reader was there (an agent's heartbeat or the processor). */
  last_seen_at: z.string().nullable().default(null),
  seq: z.number().int().nonnegative(),
  /** What the counter shows, derived from `action`. */
  activity: z.enum(READER_ACTIVITIES),
  action: ReaderActionStateSchema.nullable(),
  /** The payment of `action`, when it is one of ours. */
  payment: ReaderPaymentSchema.nullable().default(null),
});
export type ReaderStatePush = z.infer<typeof ReaderStatePushSchema>;

/** A location of the merchant and mode as agents need it: when its counter prints receipts by itself. */
export const LocationPolicySchema = z.object({
  id: z.string(),
  display_name: z.string(),
  receipt_policy: z.enum(RECEIPT_POLICIES),
});
export type LocationPolicy = z.infer<typeof LocationPolicySchema>;

export const ServerDownMessageSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('welcome'),
    agent_id: z.string(),
    mode: z.enum(['test', 'live']),
    merchant: z.object({ id: z.string(), business_name: z.string() }),
    presence_ttl_ms: z.number().int().positive(),
    /** Where transaction pushes start: the agent's cursor, or the newest event on a first connection. */
    cursor: z.number().int().nonnegative(),
    /**
     * Protocol 1 only: agents of that protocol drop the reports queued at or below it; the server
     * keeps no report, so it covers every seq.
     */
    last_report_seq: z.number().int().nonnegative().optional(),
    /** Protocol 2 on: the protocol the server speaks with this agent, and the server's version. */
    protocol: z.number().int().optional(),
    server_version: z.string().optional(),
  }),
  /** The server's view of the readers of the last heartbeat; `unknown` are references it has no reader for. */
  z.object({ type: z.literal('presence'), readers: z.array(PresenceReaderSchema), unknown: z.array(ReaderRefSchema) }),
  /** The answer to an older agent's `reports`: it may forget them (nothing is stored). */
  z.object({ type: z.literal('reports_ack'), seq: z.number().int().nonnegative() }),
  /** These drawer openings are in the audit trail: the agent forgets them. */
  z.object({ type: z.literal('drawer_ack'), ids: z.array(z.string()) }),
  /** Every reader of the merchant and mode with its payment: sent once after the welcome; readers not in it are gone. */
  z.object({ type: z.literal('reader_states'), readers: z.array(ReaderStatePushSchema) }),
  /** One reader changed: its action, or the payment of its action (or a reader was registered). */
  z.object({ type: z.literal('reader_state'), reader: ReaderStatePushSchema }),
  /** Every location of the merchant and mode, oldest first: sent after the welcome and whenever one is created or its receipt policy changes. */
  z.object({ type: z.literal('locations'), locations: z.array(LocationPolicySchema) }),
  /** A transaction of this merchant and mode changed; `seq` is the cursor to resume after. */
  z.object({ type: z.literal('transaction'), seq: z.number().int().positive(), event: z.string(), transaction: z.record(z.string(), z.unknown()) }),
  z.object({ type: z.literal('error'), error: z.object({ type: z.string(), code: z.string().optional(), message: z.string() }) }),
]);
export type ServerDownMessage = z.infer<typeof ServerDownMessageSchema>;
