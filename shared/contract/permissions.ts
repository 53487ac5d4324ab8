/**
 * What a restricted key (`rk_test_…`, `rk_live_…`) may do: permissions are `<resource>:read` or
 * `<resource>:write`, as on Stripe's restricted keys, and `write` includes `read`. Every /v1
 * operation names the one permission it needs in its route declaration (`scope`), so this table
 * and the declarations are the whole of the rule; docs/api-choices.md lists them for people.
 */

/** Each resource group and the levels it offers (events are only ever read: they are written by the server). */
export const RESOURCES = {
  transactions: { levels: ['read', 'write'], covers: 'payments: create, capture, cancel, retrieve, list (also /v1/payment-intents)' },
  refunds: { levels: ['read', 'write'], covers: "refunds of payments and a payment's refund list" },
  disputes: { levels: ['read', 'write'], covers: 'disputes: read, submit evidence, accept' },
  payouts: { levels: ['read', 'write'], covers: 'the balance and payouts to the bank' },
  merchant: { levels: ['read', 'write'], covers: 'GET /v1/merchant, the bank account payouts go to' },
  customers: { levels: ['read', 'write'], covers: 'customers' },
  terminal: { levels: ['read', 'write'], covers: "readers, locations, payments on readers, readers' live state, the agents' printers and displays, the agent's websocket" },
  checkout: { levels: ['read', 'write'], covers: 'hosted checkout sessions' },
  payment_links: { levels: ['read', 'write'], covers: 'payment links' },
  webhooks: { levels: ['read', 'write'], covers: 'webhook endpoints, and resending an event to one' },
  events: { levels: ['read'], covers: 'the event log and its live stream' },
} as const satisfies Record<string, { levels: readonly ('read' | 'write')[]; covers: string }>;

export type Resource = keyof typeof RESOURCES;
export type Permission = { [R in Resource]: `${R}:${(typeof RESOURCES)[R]['levels'][number]}` }[Resource];

/** Every permission a restricted key can hold, in the table's order. */
export const PERMISSIONS: readonly Permission[] = (Object.entries(RESOURCES) as [Resource, (typeof RESOURCES)[Resource]][]).flatMap(([resource, { levels }]) =>
  levels.map((level) => `${resource}:${level}` as Permission),
);

const PERMISSION_SET: ReadonlySet<string> = new Set(PERMISSIONS);

export function isPermission(value: string): value is Permission {
  return PERMISSION_SET.has(value);
}

/**
 * Named sets for the common jobs, expanded when a key is created: a key keeps the permissions it
 * was made with even if a preset grows later.
 */
export const PRESETS = {
  /**
   * The shop PC: the agent and the counter TUI. Payments on readers and everything the counter
   * shows (readers, recent payments, the day's close-out from the event log), cancelling a payment
   * and a payment link as a fallback; never refunds, payouts, customers, disputes or keys.
   */
  counter: ['transactions:write', 'merchant:read', 'terminal:write', 'payment_links:write', 'events:read'],
  /** Read-only, for reporting and accounting: every `:read`. */
  reporting: PERMISSIONS.filter((p) => p.endsWith(':read')),
  /** A webhook integration: manage endpoints and read and resend events. */
  webhooks: ['webhooks:write', 'events:read'],
} as const satisfies Record<string, readonly Permission[]>;

export type Preset = keyof typeof PRESETS;
export const PRESET_NAMES = Object.keys(PRESETS) as Preset[];

export function isPreset(value: string): value is Preset {
  return Object.hasOwn(PRESETS, value);
}
