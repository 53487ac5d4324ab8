import type { Command } from 'commander';
import { ioOf } from '../io.js';
import type { ServerServiceOptions } from './server-service.js';

export function registerServerCommands(program: Command): void {
  const server = program
    .command('server')
    .description('Run the /v1 API server on the embedded database')
    .option('--role <role>', 'all (default): everything; api: the /v1 API, pages, processor events and agents, no background loops; worker: webhook delivery, reconciler, sweeps and expiry, serving only /healthz, /readyz and /metrics (both need PostgreSQL and a shared processor; env POS_ROLE)')
    .option('--port <port>', 'port to listen on (env POS_PORT)', undefined)
    .option('--host <host>', 'address to bind (env POS_HOST)', undefined)
    .option('--data-dir <dir>', 'where the database lives (env POS_DATA_DIR, default ./.pos)')
    .option('--database-url <url>', 'use PostgreSQL (postgres://…) instead of the embedded SQLite (env DATABASE_URL)')
    .option('--database-schema <name>', 'PostgreSQL schema to use, created if missing (env POS_DATABASE_SCHEMA)')
    .option('--master-key-file <path>', 'the main key secrets and customer details are encrypted under (env POS_MASTER_KEY or POS_MASTER_KEY_FILE; default <data dir>/master.key, made on first start; docs/keys.md)')
    .option('--rate-limit <n>', 'requests per merchant and mode per window (env POS_RATE_LIMIT, default 6000)')
    .option('--rate-window <seconds>', 'rate-limit window in seconds (env POS_RATE_WINDOW, default 60)')
    .option('--processor <name>', 'simulator (default, offline) or stripe (env POS_PROCESSOR; keys from STRIPE_* env, see docs/processor.md)')
    .option('--simulate-live', 'with the simulator: let live-mode keys take simulated payments too, for development and tests (env POS_SIMULATE_LIVE=1); every live page and receipt then says payments are simulated')
    .option('--account-type <type>', "what merchants' live connected accounts are: express (default: Stripe-hosted onboarding) or custom (the platform collects what Stripe needs); test-mode accounts are made ready at once (env POS_ACCOUNT_TYPE, docs/processor.md)")
    .option('--simulated-live-accounts <how>', 'with --simulate-live: ready (default: live accounts charge at once, like test ones) or onboarding (they walk onboarding first, as real live accounts do) (env POS_SIMULATED_LIVE_ACCOUNTS)')
    .option('--idempotency-ttl-hours <hours>', 'how long idempotency keys are kept, 24–720 (env POS_IDEMPOTENCY_TTL_HOURS, default 24)')
    .option('--reconcile-interval-ms <ms>', 'how often the reconciler runs: recovery, polling fallback (each payment at most every 10 s), sweeps (default 5000)')
    .option('--public-url <url>', 'where customers reach this server, for receipt and checkout links (env POS_PUBLIC_URL; default its own URL)')
    .option('--terminal-stale-ms <ms>', 'cancel pending terminal payments older than this (env POS_TERMINAL_STALE_MS, default 600000)')
    .option('--webhook-timeout-ms <ms>', 'how long a webhook receiver has to answer, up to 30000 (env POS_WEBHOOK_TIMEOUT_MS, default 15000)')
    .option('--processor-timeout-ms <ms>', 'the longest one processor call may take, waits for the rate budget and retries of 429s included, 500–80000 (env POS_PROCESSOR_TIMEOUT_MS, default 20000)')
    .option('--webhook-egress <policy>', 'any (default: test-mode endpoints may be private or loopback addresses) or public (refuse them: platform deployments); live endpoints must be public https URLs either way (env POS_WEBHOOK_EGRESS)')
    .option('--trust-proxy <proxies>', 'behind a load balancer: how many proxy hops (1), or which proxies (10.0.0.0/8,fd00::/8, loopback) to believe X-Forwarded-For from (env POS_TRUST_PROXY; default none)')
    .option('--webhook-retry-scale <factor>', 'compress the webhook retry schedule and 3-day window, for tests only (env POS_WEBHOOK_RETRY_SCALE, default 1)')
    .option('--recovery-retry-scale <factor>', 'compress the backoff and age limit of retried half-done requests, for tests only (env POS_RECOVERY_RETRY_SCALE, default 1)')
    .option('--presence-ttl-ms <ms>', 'mark agent-reported readers offline after this long without a heartbeat (env POS_PRESENCE_TTL_MS, default 3 agent heartbeats)')
    .option('--reader-check-ms <ms>', 'read a reader from the processor when its payment had no event for this long (env POS_READER_CHECK_MS, default 30000)')
    .option('--reader-status-max-age-ms <ms>', 'before a payment on a reader, read it from the processor unless it said the reader was online within this long; 0 always reads (env POS_READER_STATUS_MAX_AGE_MS, default 30000)')
    .option('--backup-every <duration>', 'back up the embedded store this often (90s, 30m, 1h, 1d; env POS_BACKUP_EVERY; docs/operations.md, "Backups")')
    .option('--backup-keep <n>', 'scheduled backups kept, the oldest removed first (env POS_BACKUP_KEEP, default 24)')
    .option('--backup-dir <dir>', 'where scheduled backups go (env POS_BACKUP_DIR, default <data dir>/backups; better on another disk)')
    .option('--retain-events-days <days>', 'delete events older than this, with their webhook deliveries, 4–3650 (env POS_RETAIN_EVENTS_DAYS, default 30 as Stripe)')
    .option('--retain-deliveries-days <days>', 'delete finished webhook deliveries older than this, 4–3650 (env POS_RETAIN_DELIVERIES_DAYS, default 30)')
    .option('--retain-processor-events-days <days>', "delete the log of the processor's events older than this, 4–3650 (env POS_RETAIN_PROCESSOR_EVENTS_DAYS, default 30)")
    .option('--metrics-listen <host:port>', 'serve /metrics (Prometheus), /readyz and /healthz on this address of their own, e.g. 127.0.0.1:9464 (env POS_METRICS_LISTEN; docs/operations.md)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env POS_LOG_LEVEL)')
    .addHelpText('after', '\nExamples:\n  pos server\n  pos server --port 8080 --data-dir /var/lib/pos\n  pos server --backup-every 1h --backup-keep 24 --backup-dir /mnt/backup/pos')
    .action(async (options: Record<string, string | boolean | undefined>, command: Command) => {
      const { runServer } = await import('./server-action.js');
      await runServer(options, ioOf(command));
    });
  server
    .command('install-service')
    .description('Write a systemd unit running pos server on /var/lib/pos, and a secrets file with the DATABASE_URL, STRIPE_* and POS_* environment it is run with; does not start it')
    .option('--port <port>', 'port to listen on (default 4242)')
    .option('--host <host>', 'address to bind (default 127.0.0.1)')
    .option('--role <role>', 'all (default), api or worker')
    .option('--unit-dir <dir>', 'where the unit is written', '/etc/systemd/system')
    .option('--secrets-file <path>', 'where the environment is written (mode 0600, read by systemd as root)', '/etc/pos/server.env')
    .option('--print', 'print the unit (and the names in the secrets file) instead of writing them')
    .addHelpText('after', '\nThen: sudo systemctl daemon-reload && sudo systemctl enable --now pos-server (see docs/deployment.md)')
    .action(async (_options: unknown, command: Command) => {
      const { installServerService } = await import('./server-service.js');
      // --port, --host and --role are also `pos server`'s own options: read both levels.
      await installServerService(command.optsWithGlobals<ServerServiceOptions>(), ioOf(command));
    });
}
