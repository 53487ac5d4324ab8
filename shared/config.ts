import { join, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { RECEIPT_POLICIES } from './receipt-policy.js';
import { parseMainKey } from './crypto/main-key.js';

/**
 * Configuration is parsed here, once, from command-line flags and the environment; nothing else in
 * the code base reads `process.env`. Flags win over the environment, the environment over defaults.
 */

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();

const dataDirSchema = z.string().min(1).transform((dir) => resolve(dir));

const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * `90s`, `30m`, `1h`, `1d` in milliseconds. At least a minute: a backup or a pass more often than
 * that is a loop, not a schedule.
 */
const durationSchema = z.string().transform((text, ctx): number => {
  const match = /^(\d+)([smhd])$/.exec(text.trim());
  const ms = match ? Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS] : Number.NaN;
  if (!(ms >= 60_000)) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text)} is not a duration of at least a minute (90s, 30m, 1h, 1d)` });
    return z.NEVER;
  }
  return ms;
});

/**
 * Days a kind of row is kept. At least 4: webhooks and the processor's events are retried for 3 days,
 * so a shorter period could drop a row still being delivered or still to be recognised as a repeat.
 */
const retentionDays = z.coerce.number().int().min(4).max(3_650);

/**
 * POS_MASTER_KEY: the main key that encrypts secrets and customers' details at rest, 32 bytes in
 * base64 or hex; during a rotation, several separated by commas, newest first (docs/keys.md).
 */
const masterKeySchema = z.string().transform((text, ctx): Buffer[] => {
  try {
    return text.split(',').map((part) => parseMainKey(part));
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `POS_MASTER_KEY: ${err instanceof Error ? err.message : String(err)}` });
    return z.NEVER;
  }
});
const masterKeyFileSchema = z.string().min(1).transform((path) => resolve(path));

/**
 * Requests per merchant and mode per window. 6,000 a minute (100/s sustained) is Stripe's own
 * default ceiling for live mode: a busy shop with several counters stays far below it, and a
 * runaway script is stopped within a minute.
 */
export const DEFAULT_RATE_LIMIT = 6_000;
export const DEFAULT_RATE_WINDOW_SECONDS = 60;

/**
 * A receiver has 15 s to answer a webhook: Standard Webhooks recommends 15 s, Stripe allows
 * about the same, and anything slower should queue the work and answer at once.
 */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 15_000;

/**
 * The webhook worker also wakes by itself when a delivery finishes; the poll only bounds how long a
 * new event waits. 200 ms is unnoticeable for a webhook and costs two indexed queries.
 */

/** The subnet names Express (proxy-addr) knows besides addresses and CIDRs. */
const PROXY_SUBNET_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Which proxies' X-Forwarded-For to believe: a hop count (`1`: the address the nearest proxy saw),
 * or a comma-separated list of addresses, CIDRs and Express's names (`10.0.0.0/8,fd00::/8`,
 * `loopback`). Trusting every proxy (`true`) is not offered: any client could then pick its own IP.
 */
const trustProxySchema = z.string().transform((value, ctx): number | string[] => {
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1) ctx.addIssue({ code: 'custom', message: 'a hop count is at least 1 (leave --trust-proxy out to trust no proxy)' });
    return hops;
  }
  const parts = value.split(',').map((part) => part.trim());
  const valid = (p: string) =>
    PROXY_SUBNET_NAMES.has(p) || ipaddr.IPv4.isValidFourPartDecimal(p) || ipaddr.IPv4.isValidCIDRFourPartDecimal(p) || ipaddr.IPv6.isValid(p) || ipaddr.IPv6.isValidCIDR(p);
  const bad = parts.find((p) => !valid(p));
  if (bad !== undefined) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(bad)} is not a hop count (1), an address, a CIDR (10.0.0.0/8) or one of loopback, linklocal, uniquelocal` });
    return z.NEVER;
  }
  return parts;
});

/**
 * `POS_SIMULATOR_RATE_LIMITS=off` lifts the simulator's enforcement of Stripe's rate limits, for
 * throughput benchmarks and bulk fixtures only: against Stripe those limits hold, so a feature that
 * needs them lifted does not work.
 */
const simulatorRateLimits = z.enum(['on', 'off']).default('on').transform((v) => v === 'on');

const listenSchema = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:4848')
  .transform((value) => {
    const at = value.lastIndexOf(':');
    return { host: value.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(value.slice(at + 1)) };
  })
  .refine((l) => l.port <= 65_535, 'port must be at most 65535');

const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
export type LogLevel = z.infer<typeof logLevel>;

/**
 * Where payments run. `simulator` (the default) starts our offline processor simulator next to the
 * server; `stripe` talks to Stripe with the keys below.
 */
const stripeSettings = z.object({
  secretKeyTest: z.string().startsWith('sk_test_').optional(),
  secretKeyLive: z.string().startsWith('sk_live_').optional(),
  publishableKeyTest: z.string().startsWith('pk_test_').optional(),
  publishableKeyLive: z.string().startsWith('pk_live_').optional(),
  webhookSecrets: z.array(z.string().startsWith('whsec_')).default([]),
  /**
   * Another base URL for the Stripe API: a standalone `pos simulator` shared by several server
   * instances (each embedding its own would give each its own processor).
   */
  apiBase: z.url({ protocol: /^https?$/ }).optional(),
});

export type StripeSettings = z.infer<typeof stripeSettings>;


/**
 * `OTEL_EXPORTER_OTLP_HEADERS`: `name=value` pairs separated by commas, as the OpenTelemetry
 * specification spells them (values percent-encoded): how a collector's token is passed.
 */
const otlpHeadersSchema = z.string().transform((text, ctx): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) {
      ctx.addIssue({ code: 'custom', message: 'must be name=value pairs separated by commas' });
      return z.NEVER;
    }
    headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
});

/**
 * Metrics and traces (docs/operations.md). Prometheus text is served on a listener of its own
 * (`metricsListen`, never the public one), or on the public listener to holders of `metricsToken`;
 * with neither, `/metrics` is not served. Traces and metrics go by OTLP/HTTP when `otlpEndpoint`
 * is set. `enabled: false` records nothing at all (the benchmark's baseline).
 */
const telemetrySchema = z.object({
  /** POS_TELEMETRY=off: nothing recorded, for measuring what recording costs. */
  enabled: z.enum(['on', 'off']).default('on').transform((v) => v === 'on'),
  metricsListen: listenSchema.optional(),
  metricsToken: z.string().min(16, 'must be at least 16 characters').optional(),
  otlpEndpoint: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, '')).optional(),
  otlpHeaders: otlpHeadersSchema.optional(),
  serviceName: z.string().min(1).max(200).default('pos'),
});

export type TelemetryConfig = z.infer<typeof telemetrySchema>;

export const serverConfigSchema = z.object({
  /**
   * What this instance runs: `api` (the /v1 API, hosted pages, processor events, agents; no
   * background loop), `worker` (webhook delivery, the reconciler, sweeps and expiry; serves only
   * the operational endpoints), or `all` (both, the default). docs/postgres.md, "Roles".
   */
  role: z.enum(['api', 'worker', 'all']).default('all'),
  processor: z.enum(['simulator', 'stripe']).default('simulator'),
  /** Whether the embedded simulator enforces Stripe's rate limits (env POS_SIMULATOR_RATE_LIMITS=on|off). */
  simulatorRateLimits,
  /** PostgreSQL instead of the embedded SQLite: `postgres://user@host:5432/db`. */
  databaseUrl: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL').optional(),
  /** The PostgreSQL schema to use (created if missing); default the connection's search_path. */
  databaseSchema: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lowercase identifier').optional(),
  /** POS_CHECK_UNITS=1: nested store transactions throw instead of hanging (development and tests). */
  checkUnits: z.boolean().default(false),
  stripe: stripeSettings,
  host: z.string().min(1).default('127.0.0.1'),
  port: port.default(4242),
  dataDir: dataDirSchema.default('.pos'),
  /** The main key (POS_MASTER_KEY); with neither it nor a key file, `<data dir>/master.key` (docs/keys.md). */
  masterKey: masterKeySchema.optional(),
  /** A file holding the main key (--master-key-file, POS_MASTER_KEY_FILE). */
  masterKeyFile: masterKeyFileSchema.optional(),
  rateLimit: positiveInt.default(DEFAULT_RATE_LIMIT),
  rateWindowSeconds: positiveInt.default(DEFAULT_RATE_WINDOW_SECONDS),
  logLevel: logLevel.default('info'),
  /** Spec §8 asks that keys be kept at least 24 h. */
  idempotencyTtlHours: z.coerce.number().min(24).max(24 * 30).default(24),
  /**
   * The public base URL of hosted checkout and payment-link pages (behind a proxy or TLS
   * terminator, the address customers reach); default the server's own listening URL.
   */
  publicUrl: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, '')).optional(),
  /** See server/payments/reconciler.ts for why 5 s. */
  reconcileIntervalMs: z.coerce.number().int().min(50).max(600_000).default(5_000),
  /** See server/terminal/readers.ts for why ten minutes. */
  terminalStaleMs: z.coerce.number().int().min(1_000).max(24 * 60 * 60 * 1000).default(10 * 60 * 1000),
  /**
   * The longest one processor call may take, its waits for the rate budget and its retries of 429s
   * included (server/processor/stripe/processor.ts says why 20 s); shorter only to test.
   */
  processorTimeoutMs: z.coerce.number().int().min(500).max(80_000).default(20_000),
  /** See docs/webhooks.md: a receiver must answer within this; 15 s is Standard Webhooks' advice. */
  webhookTimeoutMs: z.coerce.number().int().min(50).max(30_000).default(DEFAULT_WEBHOOK_TIMEOUT_MS),
  /** Multiplies every webhook retry delay and the 3-day retry window; below 1 only to test. */
  webhookRetryScale: z.coerce.number().positive().max(1).default(1),
  /** Multiplies the recovery backoff and its age limit (server/idempotency/recovery-schedule.ts); below 1 only to test. */
  recoveryRetryScale: z.coerce.number().positive().max(1).default(1),
  /**
   * `any` lets test-mode endpoints target private and loopback addresses (a developer's receiver);
   * `public` refuses them (SSRF). Live endpoints must be public `https://` URLs either way
   * (server/webhooks/egress.ts).
   */
  webhookEgress: z.enum(['any', 'public']).default('any'),
  /**
   * With the simulator as processor, live mode moves no money, so live requests that would are
   * refused (`live_mode_unavailable`) unless this is set: then live mode runs on the simulator too,
   * for development and tests, and every live page, receipt and the start-up log says so.
   */
  simulateLive: z.boolean().default(false),
  /**
   * What live connected accounts are: `express` (Stripe's hosted onboarding collects what Stripe
   * needs; the default) or `custom` (the platform collects it and sends it by API). Test-mode
   * accounts are made ready at once with Stripe's test verification values (docs/processor.md).
   */
  accountType: z.enum(['express', 'custom']).default('express'),
  /**
   * With `--simulate-live`: `ready` makes simulated live accounts ready at once like test-mode
   * ones (the default: live-mode development and tests charge at once); `onboarding` makes them as
   * real live accounts are made, so they walk onboarding before they can charge.
   */
  simulatedLiveAccounts: z.enum(['ready', 'onboarding']).default('ready'),
  /** Live endpoints follow the test-mode egress rule: for a server whose live mode moves no real money. */
  liveEndpointsFollowTestRule: z.boolean().default(false),
  /** Which proxies in front of the server to believe about the client's address; unset trusts none. */
  trustProxy: trustProxySchema.optional(),
  /** Agent presence TTL; unset = three of each agent's heartbeat intervals (server/terminal/agents.ts). */
  presenceTtlMs: z.coerce.number().int().min(100).max(24 * 60 * 60 * 1000).optional(),
  /** An in-progress reader action with no event for this long is read from the processor (server/terminal/reader-actions.ts). */
  readerCheckMs: z.coerce.number().int().min(100).max(24 * 60 * 60 * 1000).default(30_000),
  /** A reader the processor said was online this recently is not read again before a payment for it; 0 reads every time (server/terminal/readers.ts). */
  readerStatusMaxAgeMs: z.coerce.number().int().min(0).max(24 * 60 * 60 * 1000).default(30_000),
  /** How often the embedded store is backed up (`1h`, `30m`, `1d`); unset, never (docs/operations.md, "Backups"). */
  backupEveryMs: durationSchema.optional(),
  /** How many scheduled backups are kept, the oldest removed first: 24 hourly ones are a day back. */
  backupKeep: z.coerce.number().int().min(1).max(10_000).default(24),
  /** Where scheduled backups go; default `<data dir>/backups`. Another disk is better. */
  backupDir: dataDirSchema.optional(),
  /** Retention in days (docs/operations.md, "Retention"): events 30 as Stripe; each above the 3-day retry windows. */
  retainEventsDays: retentionDays.default(30),
  retainDeliveriesDays: retentionDays.default(30),
  retainProcessorEventsDays: retentionDays.default(30),
  telemetry: telemetrySchema.prefault({}),
});

export type ServerConfig = z.infer<typeof serverConfigSchema>;

export interface ServerFlags {
  role?: string | undefined;
  host?: string | undefined;
  port?: string | number | undefined;
  dataDir?: string | undefined;
  masterKeyFile?: string | undefined;
  rateLimit?: string | number | undefined;
  rateWindow?: string | number | undefined;
  logLevel?: string | undefined;
  processor?: string | undefined;
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
  idempotencyTtlHours?: string | number | undefined;
  reconcileIntervalMs?: string | number | undefined;
  publicUrl?: string | undefined;
  terminalStaleMs?: string | number | undefined;
  webhookTimeoutMs?: string | number | undefined;
  processorTimeoutMs?: string | number | undefined;
  webhookRetryScale?: string | number | undefined;
  recoveryRetryScale?: string | number | undefined;
  webhookEgress?: string | undefined;
  simulateLive?: boolean | undefined;
  liveEndpointsFollowTestRule?: boolean | undefined;
  trustProxy?: string | undefined;
  presenceTtlMs?: string | number | undefined;
  accountType?: string | undefined;
  simulatedLiveAccounts?: string | undefined;
  readerCheckMs?: string | number | undefined;
  readerStatusMaxAgeMs?: string | number | undefined;
  backupEvery?: string | undefined;
  backupKeep?: string | number | undefined;
  backupDir?: string | undefined;
  retainEventsDays?: string | number | undefined;
  retainDeliveriesDays?: string | number | undefined;
  retainProcessorEventsDays?: string | number | undefined;
  metricsListen?: string | undefined;
}

function pick<T>(...values: (T | undefined)[]): T | undefined {
  return values.find((v) => v !== undefined && v !== '');
}

function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.join('.') ?? '';
    throw new ConfigError(`invalid configuration${where ? ` for ${where}` : ''}: ${issue?.message ?? 'unknown'}`);
  }
  return result.data;
}

export function loadServerConfig(flags: ServerFlags, env: Env = process.env): ServerConfig {
  const simulateLive = flags.simulateLive ?? (env.POS_SIMULATE_LIVE === '1' || env.POS_SIMULATE_LIVE === 'true');
  const config = parseOrThrow(serverConfigSchema, {
    role: pick(flags.role, env.POS_ROLE),
    host: pick(flags.host, env.POS_HOST),
    port: pick(flags.port, env.POS_PORT, env.PORT),
    dataDir: pick(flags.dataDir, env.POS_DATA_DIR),
    masterKey: pick(env.POS_MASTER_KEY),
    masterKeyFile: pick(flags.masterKeyFile, env.POS_MASTER_KEY_FILE),
    rateLimit: pick(flags.rateLimit, env.POS_RATE_LIMIT),
    rateWindowSeconds: pick(flags.rateWindow, env.POS_RATE_WINDOW),
    logLevel: pick(flags.logLevel, env.POS_LOG_LEVEL),
    processor: pick(flags.processor, env.POS_PROCESSOR),
    simulatorRateLimits: pick(env.POS_SIMULATOR_RATE_LIMITS),
    databaseUrl: pick(flags.databaseUrl, env.DATABASE_URL),
    databaseSchema: pick(flags.databaseSchema, env.POS_DATABASE_SCHEMA),
    checkUnits: env.POS_CHECK_UNITS === '1',
    idempotencyTtlHours: pick(flags.idempotencyTtlHours, env.POS_IDEMPOTENCY_TTL_HOURS),
    reconcileIntervalMs: pick(flags.reconcileIntervalMs, env.POS_RECONCILE_INTERVAL_MS),
    publicUrl: pick(flags.publicUrl, env.POS_PUBLIC_URL),
    terminalStaleMs: pick(flags.terminalStaleMs, env.POS_TERMINAL_STALE_MS),
    webhookTimeoutMs: pick(flags.webhookTimeoutMs, env.POS_WEBHOOK_TIMEOUT_MS),
    processorTimeoutMs: pick(flags.processorTimeoutMs, env.POS_PROCESSOR_TIMEOUT_MS),
    webhookRetryScale: pick(flags.webhookRetryScale, env.POS_WEBHOOK_RETRY_SCALE),
    recoveryRetryScale: pick(flags.recoveryRetryScale, env.POS_RECOVERY_RETRY_SCALE),
    webhookEgress: pick(flags.webhookEgress, env.POS_WEBHOOK_EGRESS),
    simulateLive,
    liveEndpointsFollowTestRule: flags.liveEndpointsFollowTestRule ?? simulateLive,
    trustProxy: pick(flags.trustProxy, env.POS_TRUST_PROXY),
    presenceTtlMs: pick(flags.presenceTtlMs, env.POS_PRESENCE_TTL_MS),
    accountType: pick(flags.accountType, env.POS_ACCOUNT_TYPE),
    simulatedLiveAccounts: pick(flags.simulatedLiveAccounts, env.POS_SIMULATED_LIVE_ACCOUNTS),
    readerCheckMs: pick(flags.readerCheckMs, env.POS_READER_CHECK_MS),
    readerStatusMaxAgeMs: pick(flags.readerStatusMaxAgeMs, env.POS_READER_STATUS_MAX_AGE_MS),
    backupEveryMs: pick(flags.backupEvery, env.POS_BACKUP_EVERY),
    backupKeep: pick(flags.backupKeep, env.POS_BACKUP_KEEP),
    backupDir: pick(flags.backupDir, env.POS_BACKUP_DIR),
    retainEventsDays: pick(flags.retainEventsDays, env.POS_RETAIN_EVENTS_DAYS),
    retainDeliveriesDays: pick(flags.retainDeliveriesDays, env.POS_RETAIN_DELIVERIES_DAYS),
    retainProcessorEventsDays: pick(flags.retainProcessorEventsDays, env.POS_RETAIN_PROCESSOR_EVENTS_DAYS),
    telemetry: {
      enabled: pick(env.POS_TELEMETRY),
      metricsListen: pick(flags.metricsListen, env.POS_METRICS_LISTEN),
      metricsToken: pick(env.POS_METRICS_TOKEN),
      otlpEndpoint: pick(env.OTEL_EXPORTER_OTLP_ENDPOINT),
      otlpHeaders: pick(env.OTEL_EXPORTER_OTLP_HEADERS),
      serviceName: pick(env.OTEL_SERVICE_NAME),
    },
    stripe: {
      apiBase: pick(env.STRIPE_API_BASE),
      secretKeyTest: pick(env.STRIPE_SECRET_KEY_TEST),
      secretKeyLive: pick(env.STRIPE_SECRET_KEY_LIVE),
      publishableKeyTest: pick(env.STRIPE_PUBLISHABLE_KEY_TEST),
      publishableKeyLive: pick(env.STRIPE_PUBLISHABLE_KEY_LIVE),
      // Stripe gives each endpoint (test and live are separate endpoints, and connected accounts'
      // events need a Connect endpoint of their own) its own secret.
      webhookSecrets: [
        env.STRIPE_WEBHOOK_SECRET,
        env.STRIPE_WEBHOOK_SECRET_TEST,
        env.STRIPE_WEBHOOK_SECRET_LIVE,
        env.STRIPE_WEBHOOK_SECRET_CONNECT,
        env.STRIPE_WEBHOOK_SECRET_CONNECT_TEST,
        env.STRIPE_WEBHOOK_SECRET_CONNECT_LIVE,
      ].filter(
        (v): v is string => v !== undefined && v !== '',
      ),
    },
  });
  // On the embedded store commit notices stay inside one process, so a worker in another would
  // not hear of new webhooks and the reconciler counts on being the only process.
  if (config.role !== 'all' && !config.databaseUrl) throw new ConfigError(`--role ${config.role} needs PostgreSQL (--database-url): on the embedded SQLite store one process runs everything (--role all)`);
  // Each instance's embedded simulator would be a processor of its own: the worker would poll payments its API never made.
  if (config.role !== 'all' && config.processor !== 'stripe') throw new ConfigError(`--role ${config.role} needs one processor shared by every instance: --processor stripe (Stripe, or a standalone pos simulator through STRIPE_API_BASE)`);
  // Hosted checkout and payment-link pages load Stripe.js with the publishable key: without it
  // every customer would meet a broken page, so the server does not start.
  if (config.processor === 'stripe' && config.stripe.secretKeyTest && !config.stripe.publishableKeyTest) throw new ConfigError('--processor stripe with STRIPE_SECRET_KEY_TEST needs STRIPE_PUBLISHABLE_KEY_TEST (pk_test_…) for the checkout pages (`pos simulator env` prints both for the simulator)');
  if (config.processor === 'stripe' && config.stripe.secretKeyLive && !config.stripe.publishableKeyLive) throw new ConfigError('--processor stripe with STRIPE_SECRET_KEY_LIVE needs STRIPE_PUBLISHABLE_KEY_LIVE (pk_live_…) for the checkout pages');
  // With Stripe, live payments are real: a flag saying they are simulated would mislead whoever set it.
  if (config.simulateLive && config.processor === 'stripe') throw new ConfigError('--simulate-live needs the simulator: with --processor stripe, live payments are real');
  // Only simulated live accounts can be made ready with test values; saying so elsewhere would mislead.
  if (pick(flags.simulatedLiveAccounts, env.POS_SIMULATED_LIVE_ACCOUNTS) !== undefined && !config.simulateLive) {
    throw new ConfigError('--simulated-live-accounts needs --simulate-live: real live accounts always walk onboarding');
  }
  if (config.backupEveryMs !== undefined && config.databaseUrl) {
    throw new ConfigError('--backup-every backs up the embedded SQLite store; on PostgreSQL use pg_dump or continuous archiving (docs/operations.md, "Backups")');
  }
  if (config.backupEveryMs === undefined && (pick(flags.backupKeep, env.POS_BACKUP_KEEP) ?? pick(flags.backupDir, env.POS_BACKUP_DIR)) !== undefined) {
    throw new ConfigError('--backup-keep and --backup-dir need --backup-every: say how often to back up');
  }
  return config;
}

export interface StoreConfig {
  dataDir: string;
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
  masterKey?: Buffer[] | undefined;
  masterKeyFile?: string | undefined;
}

/** Where the ledger and its main key live, for commands that open it directly (admin). */
export function loadStoreConfig(
  flags: { dataDir?: string | undefined; databaseUrl?: string | undefined; databaseSchema?: string | undefined; masterKeyFile?: string | undefined },
  env: Env = process.env,
): StoreConfig {
  return parseOrThrow(serverConfigSchema.pick({ dataDir: true, databaseUrl: true, databaseSchema: true, masterKey: true, masterKeyFile: true }), {
    dataDir: pick(flags.dataDir, env.POS_DATA_DIR),
    databaseUrl: pick(flags.databaseUrl, env.DATABASE_URL),
    databaseSchema: pick(flags.databaseSchema, env.POS_DATABASE_SCHEMA),
    masterKey: pick(env.POS_MASTER_KEY),
    masterKeyFile: pick(flags.masterKeyFile, env.POS_MASTER_KEY_FILE),
  });
}

/**
 * Where `pos simulator` on its own keeps its state unless told: a directory of its own, not the
 * `.pos` whose `simulator/` is the embedded processor of `pos server` and `pos up`.
 */
export const DEFAULT_SIMULATOR_DATA_DIR = '.pos-simulator';

/** The main key settings of `pos simulator` on its own: its data dir's key file unless a key is given. */
export function loadSimulatorKeySettings(flags: { dataDir?: string | undefined; masterKeyFile?: string | undefined }, env: Env = process.env): { dataDir: string; masterKey?: Buffer[] | undefined; masterKeyFile?: string | undefined } {
  return parseOrThrow(serverConfigSchema.pick({ dataDir: true, masterKey: true, masterKeyFile: true }), {
    dataDir: pick(flags.dataDir, env.POS_DATA_DIR) ?? DEFAULT_SIMULATOR_DATA_DIR,
    masterKey: pick(env.POS_MASTER_KEY),
    masterKeyFile: pick(flags.masterKeyFile, env.POS_MASTER_KEY_FILE),
  });
}

/**
 * The on-premise agent (`pos agent`). Heartbeats every 5 s by default: presence then lapses 15 s
 * after an agent dies (three heartbeats), quick enough for a counter and a trickle of traffic.
 */
export const DEFAULT_AGENT_HEARTBEAT_MS = 5_000;
export const DEFAULT_AGENT_LISTEN = '127.0.0.1:4848';



/** Loopback binds need no token; anything reachable from the LAN does. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

const serialDeviceSpec = z
  .string()
  .regex(/^(\/.+|usb:[0-9a-fA-F]{4}:[0-9a-fA-F]{4})$/, 'must be a device path (/dev/ttyUSB0) or usb:VID:PID (usb:0403:6001)');

const printerSpec = z
  .string()
  .regex(
    /^(\/.+|usb:[0-9a-fA-F]{4}:[0-9a-fA-F]{4}|tcp:(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5})$/,
    'must be a device path (/dev/ttyUSB0), usb:VID:PID (usb:04b8:0e15) or tcp:HOST:PORT (tcp:192.168.1.50:9100)',
  );

export const agentConfigSchema = z
  .object({
    serverUrl: z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, '')),
    apiKey: z.string().regex(/^(sk|rk)_(test|live)_[0-9A-Za-z]+$/, 'must be a restricted key (rk_test_… or rk_live_…, made with `pos keys create --preset counter`) or a secret key (sk_…)'),
    dataDir: dataDirSchema.default('.pos-agent'),
    listen: listenSchema.prefault(DEFAULT_AGENT_LISTEN),
    token: z.string().min(16, 'must be at least 16 characters').optional(),
    heartbeatMs: z.coerce.number().int().min(50).max(600_000).default(DEFAULT_AGENT_HEARTBEAT_MS),
    simulate: z.coerce.number().int().min(0).max(1_000).default(0),
    printer: printerSpec.optional(),
    printerColumns: z.coerce.number().pipe(z.union([z.literal(32), z.literal(42), z.literal(48)], { message: 'must be 32 (58 mm paper), 42 or 48 (80 mm)' })).default(42),
    printerCodepage: z.string().regex(/^[a-z0-9-]{2,20}$/, 'must be a code page name such as cp437, cp858 or cp1252').default('cp858'),
    /** Overrides every location's receipt policy when given; left out, each location's own applies (agent/receipt-policy.ts). */
    receipts: z.enum(RECEIPT_POLICIES).optional(),
    display: serialDeviceSpec.optional(),
    displayIdle: z.string().min(1).max(20).optional(),
    deviceBaud: z.coerce.number().int().positive().default(9_600),
    processorReaders: z.boolean().default(true),
    name: z.string().min(1).max(200).optional(),
    logLevel: logLevel.default('info'),
  })
  .refine((c) => isLoopbackHost(c.listen.host) || c.token !== undefined, { message: 'a non-loopback --listen needs --token (env POS_AGENT_TOKEN)', path: ['token'] })
  .refine((c) => c.simulate === 0 || c.apiKey.includes('_test_'), { message: '--simulate needs a test key (rk_test_… or sk_test_…)', path: ['simulate'] });

export type AgentConfig = z.infer<typeof agentConfigSchema>;

export interface AgentFlags {
  server?: string | undefined;
  apiKey?: string | undefined;
  dataDir?: string | undefined;
  listen?: string | undefined;
  token?: string | undefined;
  heartbeatMs?: string | number | undefined;
  simulate?: string | number | undefined;
  printer?: string | undefined;
  printerColumns?: string | number | undefined;
  printerCodepage?: string | undefined;
  receipts?: string | undefined;
  display?: string | undefined;
  displayIdle?: string | undefined;
  deviceBaud?: string | number | undefined;
  processorReaders?: boolean | undefined;
  name?: string | undefined;
  logLevel?: string | undefined;
}

export function loadAgentConfig(flags: AgentFlags, env: Env = process.env): AgentConfig {
  return parseOrThrow(agentConfigSchema, {
    serverUrl: pick(flags.server, env.POS_SERVER_URL),
    apiKey: pick(flags.apiKey, env.POS_API_KEY),
    dataDir: pick(flags.dataDir, env.POS_AGENT_DATA_DIR),
    listen: pick(flags.listen, env.POS_AGENT_LISTEN),
    token: pick(flags.token, env.POS_AGENT_TOKEN),
    heartbeatMs: pick(flags.heartbeatMs, env.POS_AGENT_HEARTBEAT_MS),
    simulate: pick(flags.simulate, env.POS_AGENT_SIMULATE),
    printer: pick(flags.printer, env.POS_AGENT_PRINTER),
    printerColumns: pick(flags.printerColumns, env.POS_AGENT_PRINTER_COLUMNS),
    printerCodepage: pick(flags.printerCodepage, env.POS_AGENT_PRINTER_CODEPAGE),
    receipts: pick(flags.receipts, env.POS_AGENT_RECEIPTS),
    display: pick(flags.display, env.POS_AGENT_DISPLAY),
    displayIdle: pick(flags.displayIdle, env.POS_AGENT_DISPLAY_IDLE),
    deviceBaud: pick(flags.deviceBaud, env.POS_AGENT_DEVICE_BAUD),
    processorReaders: flags.processorReaders,
    name: pick(flags.name, env.POS_AGENT_NAME),
    logLevel: pick(flags.logLevel, env.POS_LOG_LEVEL),
  });
}

/** For `pos simulator` on its own: whether it enforces Stripe's rate limits. */
/**
 * Where `pos up`'s own agent listens: `--agent-listen`, then POS_AGENT_LISTEN; undefined leaves
 * the default (127.0.0.1:4848, or any free port when another agent has it). Loopback only: the
 * counter it serves is the TUI on this machine, and a LAN address would need `pos agent --token`.
 */
export function loadUpAgentListen(flags: { agentListen?: string | undefined }, env: Env = process.env): string | undefined {
  const value = pick(flags.agentListen, env.POS_AGENT_LISTEN);
  if (value === undefined) return undefined;
  const where = flags.agentListen !== undefined && flags.agentListen !== '' ? '--agent-listen' : 'POS_AGENT_LISTEN';
  const parsed = listenSchema.safeParse(value);
  if (!parsed.success) throw new ConfigError(`invalid configuration for ${where}: ${parsed.error.issues[0]?.message ?? 'must be host:port'}`);
  if (!isLoopbackHost(parsed.data.host)) throw new ConfigError(`invalid configuration for ${where}: pos up's agent listens on this machine only (127.0.0.1:PORT); run \`pos agent --listen … --token …\` for the shop's network`);
  return value;
}

/** `pos simulator`'s log level: a line per request at info (the default), only problems at warn and above, nothing when silent. */
export function loadSimulatorLogLevel(flags: { logLevel?: string | undefined }, env: Env = process.env): LogLevel {
  return parseOrThrow(z.object({ logLevel: logLevel.default('info') }), { logLevel: pick(flags.logLevel, env.POS_LOG_LEVEL) }).logLevel;
}

export function loadSimulatorRateLimits(env: Env = process.env): boolean {
  return parseOrThrow(z.object({ simulatorRateLimits }), { simulatorRateLimits: pick(env.POS_SIMULATOR_RATE_LIMITS) }).simulatorRateLimits;
}

export function loadDataDir(flags: { dataDir?: string | undefined }, env: Env = process.env): string {
  return parseOrThrow(dataDirSchema.default('.pos'), pick(flags.dataDir, env.POS_DATA_DIR));
}

/** Where API commands (`pos listen`, `pos events`, `pos trigger`) send requests, and with which key. */
export const clientConfigSchema = z.object({
  serverUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .default('http://127.0.0.1:4242')
    .transform((u) => u.replace(/\/+$/, '')),
  apiKey: z.string({ error: 'an API key is needed: pass --api-key or set POS_API_KEY' }).regex(/^(sk|rk)_(test|live)_\w+$/, 'must be a secret key (sk_test_… or sk_live_…) or a restricted key (rk_…)'),
});

export type ClientConfig = z.infer<typeof clientConfigSchema>;

export function loadClientConfig(flags: { server?: string | undefined; apiKey?: string | undefined }, env: Env = process.env): ClientConfig {
  return parseOrThrow(clientConfigSchema, { serverUrl: pick(flags.server, env.POS_SERVER_URL), apiKey: pick(flags.apiKey, env.POS_API_KEY) });
}

/** `DEBUG` turns one-line CLI errors into full stacks. */
export function debugEnabled(env: Env = process.env): boolean {
  return Boolean(env.DEBUG);
}

/** Where the CLI talks to when nothing else is said: `pos server`'s own default address. */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:4242';

const serverUrlSchema = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ''));
const profileNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'profile names are letters, digits, dot, dash and underscore');

/** The CLI's global flags as commander hands them over. */
export interface CliFlags {
  server?: string | undefined;
  apiKey?: string | undefined;
  profile?: string | undefined;
}

/** What a CLI command needs to reach the API; profile values fill in what flags and env leave open. */
export interface CliSettings {
  /** Explicit server URL from a flag or POS_SERVER_URL (undefined: the profile's, then the default). */
  server?: string | undefined;
  apiKey?: string | undefined;
  /** The profile named by --profile or POS_PROFILE (undefined: the config file's current one). */
  profile?: string | undefined;
  configDir: string;
  /** https://no-color.org: any non-empty NO_COLOR turns colour off. */
  color: boolean;
}

export function loadCliSettings(flags: CliFlags, env: Env = process.env): CliSettings {
  const home = env.HOME ?? env.USERPROFILE ?? '.';
  const configDir = pick(env.POS_CONFIG_DIR) ?? join(pick(env.XDG_CONFIG_HOME) ?? join(home, '.config'), 'pos');
  return parseOrThrow(
    z.object({
      server: serverUrlSchema.optional(),
      apiKey: z.string().regex(/^(sk|rk|pk)_(test|live)_\w+$/, 'an API key looks like sk_test_…, sk_live_… or rk_test_…').optional(),
      profile: profileNameSchema.optional(),
      configDir: z.string().min(1).transform((d) => resolve(d)),
      color: z.boolean(),
    }),
    {
      server: pick(flags.server, env.POS_SERVER_URL),
      apiKey: pick(flags.apiKey, env.POS_API_KEY),
      profile: pick(flags.profile, env.POS_PROFILE),
      configDir,
      color: !pick(env.NO_COLOR),
    },
  );
}

/** Validates a server URL given to `pos login` or `pos config set`. */
/** The server an admin command asks for what only the running server can do (`pos admin merchant onboard`). */
export function loadAdminServerUrl(flags: { server?: string | undefined }, env: Env = process.env): string {
  return parseOrThrow(serverUrlSchema.default(DEFAULT_SERVER_URL), pick(flags.server, env.POS_SERVER_URL));
}

export function parseServerUrl(url: string): string {
  return parseOrThrow(serverUrlSchema, url);
}

export function parseProfileName(name: string): string {
  return parseOrThrow(profileNameSchema, name);
}
