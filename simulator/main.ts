import type { LogLevel } from '../shared/config.js';
import type { Keyring } from '../shared/crypto/keyring.js';
import { startSimulator } from './index.js';

/** The levels of `pos server`'s log: the simulator logs requests at info and problems at warn. */
const REQUEST_LOG_LEVELS: ReadonlySet<LogLevel> = new Set(['info', 'debug', 'trace']);

/**
 * Entry point of the standalone `pos simulator` command: starts the simulator, prints where it
 * listens and the platform keys, and stops cleanly on SIGTERM or SIGINT.
 */
export async function runSimulator(opts: { dataDir: string; port: number; host: string; rateLimits?: boolean; keyring?: Keyring; logLevel?: LogLevel }): Promise<void> {
  const rateLimits = opts.rateLimits ?? true;
  const logLevel = opts.logLevel ?? 'info';
  // Listening before the start resolves: the handlers come first, so a signal sent as soon as the
  // simulator says it listens stops it cleanly rather than killing it.
  const stopped = new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  const sim = await startSimulator({
    ...(opts.keyring ? { keyring: opts.keyring } : {}),
    dataDir: opts.dataDir,
    port: opts.port,
    host: opts.host,
    rateLimits,
    // stderr is written synchronously: a line per request is a write per request, which a busy
    // simulator (a benchmark, a load test) is spared below `info`.
    ...(logLevel === 'silent' ? {} : { logger: (line: string) => process.stderr.write(`${line}\n`) }),
    requestLog: REQUEST_LOG_LEVELS.has(logLevel),
  });
  process.stdout.write(
    [
      `Processor simulator listening on ${sim.url}`,
      `  secret key (test):       ${sim.keys.secretTest}`,
      `  secret key (live):       ${sim.keys.secretLive}`,
      `  publishable key (test):  ${sim.keys.publishableTest}`,
      `  publishable key (live):  ${sim.keys.publishableLive}`,
      `Point the stripe SDK at it with { host: '${sim.host}', port: ${sim.port}, protocol: 'http' }.`,
      rateLimits
        ? "Stripe's rate limits are enforced (25 requests/s in test mode, 100/s live, 25/s per endpoint)."
        : "Stripe's rate limits are OFF (POS_SIMULATOR_RATE_LIMITS=off): for throughput benchmarks and bulk fixtures only.",
      '',
    ].join('\n'),
  );
  await stopped;
  await sim.close();
  process.exitCode = 0;
}
