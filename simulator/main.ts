import type { Keyring } from '../shared/crypto/keyring.js';
import { startSimulator } from './index.js';

/**
 * Entry point of the standalone `pos simulator` command: starts the simulator, prints where it
 * listens and the platform keys, and stops cleanly on SIGTERM or SIGINT.
 */
export async function runSimulator(opts: { dataDir: string; port: number; host: string; rateLimits?: boolean; keyring?: Keyring }): Promise<void> {
  const rateLimits = opts.rateLimits ?? true;
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
    logger: (line) => process.stderr.write(`${line}\n`),
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
