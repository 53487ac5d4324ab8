import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { expressServer } from '../shared/express-server.js';
import pino, { type Logger } from 'pino';
import type { ServerConfig } from '../shared/config.js';
import { warnLooseFiles } from '../shared/files.js';
import { type Clock, systemClock } from '../shared/time.js';
import { createApp } from './app.js';
import { liveMoneyOf } from './http/live-money.js';
import type { Store } from './db/store.js';
import type { ProcessorConnection } from './processor/connection.js';
import type { ProcessorEventHandler } from './processor/events-route.js';
import { StripeProcessor } from './processor/stripe/processor.js';
import { sharedBudgetLedger } from './processor/budget.js';
import { StoredEndpointSettings } from './processor/endpoint-settings.js';
import type { PaymentProcessor } from './processor/port.js';
import { buildServices, type Services } from './services.js';
import { DatabaseRateLimiter } from './http/rate-limit.js';
import { InFlight } from './http/in-flight.js';
import { Leases, PresenceOnDemand } from './db/leases.js';
import { presenceTtlMs, Reconciler } from './payments/reconciler.js';
import { createOperationsApp } from './operations-app.js';
import { WebhookWorker } from './webhooks/worker.js';
import { attachAgentUpstream, type AgentUpstream } from './routes/agent-upstream.js';
import { authenticateKey } from './accounts/api-keys.js';
import { Keyring } from '../shared/crypto/keyring.js';
import { keySourceOf } from '../shared/crypto/key-source.js';
import { openStoreWithKeys, type StoreKeyring } from './db/encryption.js';
import { sealLegacyValues } from './db/reseal.js';
import { POS_VERSION } from '../shared/version.js';
import { BackupSchedule } from './db/backup.js';
import { retentionOf } from './retention.js';
import { Readiness } from './operations/readiness.js';
import { startTelemetry, type Telemetry } from './operations/telemetry.js';
import { instrumentTransactions } from './operations/store-telemetry.js';
import { listenForOperators, readersOnline } from './operations/listener.js';

/**
 * How long SIGTERM waits for in-flight requests, those whose clients already left included, before
 * cutting connections and closing the store under what still runs. Orchestrators (systemd,
 * Kubernetes) kill at 30 s by default; 25 s leaves them time to see a clean exit.
 */
const DRAIN_TIMEOUT_MS = 25_000;

/** How often a draining server drops connections that have gone idle: quick, and cheap at any rate. */
const IDLE_SWEEP_MS = 50;

export interface RunningServer {
  url: string;
  port: number;
  store: Store;
  /** The store's main keys: seals and opens what is encrypted at rest. */
  cipher: StoreKeyring;
  logger: Logger;
  processor: PaymentProcessor;
  services: Services;
  reconciler: Reconciler;
  webhooks: WebhookWorker;
  /** Scheduled backups of the embedded store, when `--backup-every` asks for them. */
  backups?: BackupSchedule;
  /** The on-premise agents' websocket endpoint on this server. */
  agentUpstream: AgentUpstream;
  /** The start-up work left running in the background (sealing legacy plaintext, provisioning accounts) has ended. */
  settled: Promise<void>;
  /** Whether this instance should get traffic (`/readyz`). */
  readiness: Readiness;
  telemetry: Telemetry;
  /** The operator's listener for /metrics, /readyz and /healthz (`--metrics-listen`), when there is one. */
  metricsUrl: string | undefined;
  /** Stops accepting, lets in-flight requests finish, closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  processor: ProcessorConnection;
  clock?: Clock;
  logger?: Logger;
  processorEventHandlers?: readonly ProcessorEventHandler[];
  /** Telemetry already started (tests); default: as `config.telemetry` says. */
  telemetry?: Telemetry;
  /**
   * The store, already opened with its keyring checked (`openStoreWithKeys`): the stack opens it
   * before the embedded simulator, so the database's key decides. The server closes it.
   */
  opened?: { store: Store; cipher: StoreKeyring };
  /** How long close() waits for in-flight requests; default DRAIN_TIMEOUT_MS (tests shorten it). */
  drainTimeoutMs?: number;
}

export async function startServer(config: ServerConfig, options: StartOptions): Promise<RunningServer> {
  const logger = options.logger ?? pino({ level: config.logLevel });
  const drainTimeoutMs = options.drainTimeoutMs ?? DRAIN_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;
  // The right main key or no start at all: a wrong or missing one is a ConfigError naming it.
  const { store, cipher } = options.opened ?? (await openStoreWithKeys(config, new Keyring(keySourceOf(config)), { now: clock.now(), logger }, { onLooseFile: warnLooseFiles(logger) }));
  const telemetry = options.telemetry ?? startTelemetry(config.telemetry);
  instrumentTransactions(store, telemetry);
  const processor = new StripeProcessor(
    { timeoutMs: config.processorTimeoutMs, ...options.processor },
    { ledger: sharedBudgetLedger(store), endpoints: new StoredEndpointSettings(store, cipher), telemetry },
  );
  // Page and receipt URLs default to the address the server is about to listen on; no request arrives before it does.
  let url = '';
  const publicUrl = (): string => config.publicUrl ?? url;
  const leases = new Leases(store, clock);
  // The api role runs no background loop, so nothing renews its presence on a timer: its requests
  // do, while they hold locks. The others' reconciler renews it on every pass.
  const runsApi = config.role !== 'worker';
  const runsLoops = config.role !== 'api';
  const egress = { egress: config.webhookEgress, liveEndpointsFollowTestRule: config.liveEndpointsFollowTestRule };
  const services = buildServices({
    leases,
    ...(runsLoops ? {} : { presence: new PresenceOnDemand(leases, clock, presenceTtlMs(config.reconcileIntervalMs)) }),
    store,
    cipher,
    clock,
    logger,
    processor,
    publicUrl,
    idempotencyTtlMs: config.idempotencyTtlHours * 3_600_000,
    terminalStaleMs: config.terminalStaleMs,
    webhookEgress: egress,
    webhookRetryScale: config.webhookRetryScale,
    recoveryRetryScale: config.recoveryRetryScale,
    ...(config.presenceTtlMs !== undefined ? { presenceTtlMs: config.presenceTtlMs } : {}),
    readerCheckMs: config.readerCheckMs,
    readerStatusMaxAgeMs: config.readerStatusMaxAgeMs,
    retention: retentionOf(config),
    telemetry,
  });
  const readiness = new Readiness({ db: store.db, schema: config.databaseSchema, processor, logger });
  const operations = { readiness, telemetry, metrics: config.telemetry.metricsToken ? { token: config.telemetry.metricsToken } : ('none' as const) };
  const reconciler = new Reconciler(services, logger, {
    intervalMs: config.reconcileIntervalMs,
    leases,
    singleProcess: store.dialect === 'sqlite',
    notifications: store.notifications,
  });
  // Several instances share one database on PostgreSQL, and so their rate-limit counts.
  const sharedCounts = config.databaseUrl && runsApi
    ? (await import('./db/postgres.js')).openPostgresUnflushed(config.databaseUrl, config.databaseSchema ? { schema: config.databaseSchema } : {})
    : undefined;
  const inFlight = new InFlight();
  const app = runsApi ? createApp({
    inFlight,
    ...(sharedCounts ? { rateLimiter: new DatabaseRateLimiter(sharedCounts, config.rateLimit, config.rateWindowSeconds) } : {}),
    store,
    clock,
    logger,
    config,
    processor,
    services,
    ...(options.processorEventHandlers ? { processorEventHandlers: options.processorEventHandlers } : {}),
    operations,
  }) : createOperationsApp({ logger, operations });
  const server: Server = expressServer(app);
  // Agents connect to API instances; a worker refuses the upgrade like any other unknown path.
  const agentUpstream: AgentUpstream = runsApi
    ? attachAgentUpstream(server, { keys: { authenticate: (presented, now) => authenticateKey(store.db, presented, now) }, clock, logger, services })
    : { connected: () => 0, close: async () => undefined };
  if (runsLoops) {
    services.presenceExpiry.start();
    services.readerReconciler.start();
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  url = `http://${host}:${port}`;
  if (processor.kind === 'simulator' && runsApi) await processor.registerWebhookEndpoint(`${url}/processor/webhooks`);
  const metricsListener = config.telemetry.metricsListen ? await listenForOperators(config.telemetry.metricsListen, { readiness, telemetry, metrics: 'open' }) : undefined;
  const webhooks = new WebhookWorker(services.webhookQueue, clock, logger, store.notifications, { timeoutMs: config.webhookTimeoutMs, egress, metrics: telemetry.metrics });
  if (runsLoops) {
    await reconciler.start();
    await webhooks.start();
    services.retention.start();
  }
  // Checked in the configuration: scheduled backups are of the embedded store only, which runs every role.
  const backups =
    config.backupEveryMs !== undefined && store.dialect === 'sqlite' && runsLoops
      ? new BackupSchedule({ dataDir: config.dataDir, dir: config.backupDir ?? join(config.dataDir, 'backups'), everyMs: config.backupEveryMs, keep: config.backupKeep, logger })
      : undefined;
  backups?.start();
  // The processor's first check runs in the background: an outage of Stripe must not stop a start.
  void readiness.start();
  const stopObserving = telemetry.metrics.observe({
    webhookBacklog: () => services.webhookQueue.backlog(),
    readersOnline: () => readersOnline(store.db),
    eventStreams: () => services.eventStreams.size,
    agentConnections: () => agentUpstream.connected(),
    now: () => clock.now(),
  });
  cipher.follow();
  // Values stored in plaintext before encryption at rest are sealed in the background, in batches;
  // merchants made by the admin CLI get their connected accounts now rather than on first use.
  // Both are background work: the worker's.
  let closingDown = false;
  const legacy = runsLoops
    ? sealLegacyValues(store, cipher, { now: () => clock.now(), logger, stopped: () => closingDown }).catch((err: unknown) => {
        logger.warn({ err }, 'sealing the values stored in plaintext failed; the next start tries again');
      })
    : Promise.resolve();
  const provisioned = runsLoops
    ? services.connectedAccounts.provisionMissing().catch((err: unknown) => logger.warn({ err }, 'connected-account provisioning failed; retried on first use'))
    : Promise.resolve();
  const settled = Promise.all([legacy, provisioned]).then(() => undefined);
  if (options.processor.unlimited) logger.warn("the processor's rate limits are OFF (POS_SIMULATOR_RATE_LIMITS=off): for throughput benchmarks and bulk fixtures only, Stripe enforces them");
  const liveMoney = liveMoneyOf(processor.kind, config.simulateLive);
  if (liveMoney === 'simulated') logger.warn('live mode is SIMULATED (--simulate-live): live keys take simulated payments and no money moves');
  if (liveMoney === 'unavailable') logger.info('live mode takes no payments on the simulator: run with --processor stripe for real ones, or --simulate-live to try them');
  // Which migrations the database holds, and which this start applied: what `pos migrate status` says in full.
  const migrations = store.migrations ? { applied: store.migrations.applied, applied_now: store.migrations.appliedNow, pending: 0 } : undefined;
  logger.info({ url, role: config.role, version: POS_VERSION, ...storeDescription(config), processor: processor.name, live_mode: liveMoney, ...(migrations ? { migrations } : {}), ...(metricsListener ? { metrics_url: metricsListener.url } : {}) }, 'pos server listening');

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      closingDown = true;
      const drainStarted = performance.now();
      // Not ready from the first moment: a load balancer still probing sees 503 and sends no more.
      readiness.drain();
      readiness.stop();
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      // Event streams never go idle by themselves: end them so the drain is not held up.
      services.eventStreams.closeAll();
      await agentUpstream.close();
      services.keyWatch.stop();
      await services.presenceExpiry.stop();
      await services.readerReconciler.stop();
      // close() only drops connections idle at that moment; a keep-alive connection whose
      // response finishes later would otherwise hold the exit for its whole keep-alive timeout.
      server.closeIdleConnections();
      const sweeper = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
      const timer = setTimeout(() => server.closeAllConnections(), drainTimeoutMs);
      await drained;
      clearInterval(sweeper);
      clearTimeout(timer);
      // The sockets are closed, but a handler whose client left may still be at work (a processor
      // call, then the transaction recording its answer): the store and the loops stay until it is
      // done, within the same drain timeout.
      if (inFlight.count > 0) {
        const running = inFlight.count;
        logger.info({ requests: running }, 'waiting for requests whose clients left');
        if (!(await inFlight.idle(Math.max(0, drainStarted + drainTimeoutMs - performance.now())))) {
          logger.warn({ requests: inFlight.count }, 'requests still running at the drain timeout; closing the store under them');
        }
      }
      await reconciler.stop();
      await services.retention.stop();
      await backups?.stop();
      await sharedCounts?.destroy();
      await webhooks.stop();
      await legacy;
      cipher.stop();
      stopObserving();
      await metricsListener?.close();
      // Spans and metrics still buffered go out before the process ends.
      await telemetry.shutdown().catch((err: unknown) => logger.warn({ err }, 'telemetry could not be flushed'));
      await store.close();
      logger.info('pos server stopped');
    })();
    return closing;
  };
  return { url, port, store, cipher, logger, processor, services, reconciler, webhooks, agentUpstream, ...(backups ? { backups } : {}), settled, readiness, telemetry, metricsUrl: metricsListener?.url, close };
}

/**
 * Where this server keeps its ledger, for the start-up log: on PostgreSQL the database (its
 * password left out) and schema; the data dir then holds only the default main key file.
 */
function storeDescription(config: ServerConfig): Record<string, string> {
  if (!config.databaseUrl) return { data_dir: config.dataDir };
  const url = new URL(config.databaseUrl);
  url.password = '';
  return { database: url.toString(), ...(config.databaseSchema ? { schema: config.databaseSchema } : {}) };
}
