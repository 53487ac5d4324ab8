import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { loadServerConfig } from '../../shared/config.js';
import { privateDir, privateFile, warnLooseFiles, type LooseFile } from '../../shared/files.js';
import { systemClock } from '../../shared/time.js';
import { createMerchant } from '../../server/accounts/merchants.js';
import { ApiRequestError } from '../../shared/api/errors.js';
import { PosClient } from '../api.js';
import type { CliContext } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { DEFAULT_PROFILE } from '../profiles.js';
import { startStack, type Stack } from '../stack.js';
import { startLocalAgent, type LocalAgent } from '../up-agent.js';

export const DEMO_BUSINESS = 'Demo Shop';
export const DEMO_READER = 'Till 1';
const DEMO_LOCATION = { display_name: 'Demo counter', address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' } };

export interface Demo {
  /** With the demo merchant's test secret key: setting the demo up. */
  api: PosClient;
  /** The demo merchant's test secret key, saved to the profile for the developer's commands. */
  apiKey: string;
  /** A restricted key with the counter preset: what the local agent and the counter TUI use. */
  counterKey: string;
  profileName: string;
  created: boolean;
  keys?: Record<string, string>;
}

function isLoopback(url: string | undefined): boolean {
  if (!url) return true;
  const host = new URL(url).hostname;
  return host === '127.0.0.1' || host === 'localhost' || host === '[::1]';
}

/**
 * The demo merchant of `pos up`: the profile's key when it still works against this server,
 * otherwise a fresh merchant whose test key is saved to the profile. Either way it ends with a
 * test location and one simulated reader.
 */
export async function ensureDemo(stack: Stack, ctx: CliContext): Promise<Demo> {
  const url = stack.server.url;
  const profiles = ctx.config.profiles;
  // A profile that points somewhere else (a real shop) is never overwritten: the demo goes to "local".
  let profileName = ctx.config.profileName;
  const existing = profiles.get(profileName);
  if (existing?.api_key && !isLoopback(existing.server)) profileName = 'local';
  const profile = profiles.get(profileName);

  let api: PosClient | undefined;
  let apiKey = '';
  let created = false;
  let keys: Record<string, string> | undefined;
  if (profile?.api_key?.startsWith('sk_test_')) {
    const candidate = new PosClient({ server: url, apiKey: profile.api_key });
    try {
      await candidate.merchant();
      api = candidate;
      apiKey = profile.api_key;
    } catch (err) {
      if (!(err instanceof ApiRequestError)) throw err;
    }
  }
  if (!api) {
    const merchant = await createMerchant(stack.server.store, systemClock, { businessName: DEMO_BUSINESS });
    keys = { ...merchant.keys };
    api = new PosClient({ server: url, apiKey: merchant.keys.sk_test });
    apiKey = merchant.keys.sk_test;
    created = true;
    await profiles.update(profileName, { server: url, api_key: merchant.keys.sk_test, merchant_id: merchant.merchant.id, business_name: merchant.merchant.businessName });
    if (profileName !== ctx.config.profileName || !profiles.get(profiles.currentName)?.api_key || profiles.currentName === DEFAULT_PROFILE) await profiles.use(profileName);
  } else if (profile?.server !== url) {
    await profiles.update(profileName, { server: url });
  }
  if ((await api.listLocations()).data.length === 0) await api.createLocation(DEMO_LOCATION);
  if ((await api.listReaders()).data.length === 0) await api.registerReader({ name: DEMO_READER, registration_code: 'simulated-wpe' });
  const counterKey = await ensureCounterKey(api, ctx, profileName, created);
  if (keys) keys.counter = counterKey;
  return { api, apiKey, counterKey, profileName, created, ...(keys ? { keys } : {}) };
}

/** The counter's key name on the demo merchant's key list. */
export const COUNTER_KEY_NAME = 'pos up counter';

/**
 * The shop PC should not hold the secret key: the agent and the counter get a restricted key with
 * the counter preset (payments on readers, no refunds, no keys). Made once and kept in the
 * profile beside the secret key; made again if it stopped working (revoked) or the merchant is new.
 */
async function ensureCounterKey(api: PosClient, ctx: CliContext, profileName: string, newMerchant: boolean): Promise<string> {
  const saved = ctx.config.profiles.get(profileName)?.counter_key;
  if (saved && !newMerchant) {
    try {
      await new PosClient({ server: api.server, apiKey: saved }).listReaders();
      return saved;
    } catch (err) {
      if (!(err instanceof ApiRequestError)) throw err;
    }
  }
  const made = (await api.createApiKey({ name: COUNTER_KEY_NAME, preset: 'counter' })).data;
  if (!made.secret) throw new CliError('the server made a counter key but did not show it');
  await ctx.config.profiles.update(profileName, { counter_key: made.secret });
  return made.secret;
}

function keyLines(demo: Demo): string[] {
  if (!demo.keys) return [];
  return [
    `Demo merchant "${DEMO_BUSINESS}" created. Its keys are shown once; the test secret key is saved to profile "${demo.profileName}", and the counter and its agent use the restricted counter key (no refunds, no keys).`,
    ...Object.entries(demo.keys).map(([name, key]) => `  ${name.padEnd(8)} ${key}`),
  ];
}

export async function up(_args: [], options: { port?: string; host?: string; dataDir?: string; masterKeyFile?: string; tui: boolean; simulateLive?: boolean; printer?: string; display?: string }, ctx: CliContext): Promise<void> {
  const interactive = options.tui && Boolean(ctx.io.stdout.isTTY) && Boolean(ctx.io.stdin.isTTY);
  const config = loadServerConfig({ port: options.port, host: options.host, dataDir: options.dataDir, masterKeyFile: options.masterKeyFile, simulateLive: options.simulateLive }, ctx.io.env);
  // With the TUI on the terminal, server logs go to a file instead of over the screen: an
  // owner-only one in the owner-only data dir, since requests and their errors are logged there.
  const loose: LooseFile[] = [];
  let logger: Logger;
  if (interactive) {
    const logFile = join(config.dataDir, 'pos-up.log');
    privateDir(config.dataDir, (found) => loose.push(found));
    privateFile(logFile, (found) => loose.push(found));
    logger = pino({ level: config.logLevel }, pino.destination({ dest: logFile, sync: false }));
  } else {
    logger = pino({ level: config.logLevel });
  }
  for (const found of loose) warnLooseFiles(logger)(found);
  let stack: Stack;
  try {
    stack = await startStack(config, { logger });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw usageError(`port ${config.port} is in use: is another pos already running? (pos up --port 4343)`);
    throw err;
  }
  let agent: LocalAgent | undefined;
  try {
    const demo = await ensureDemo(stack, ctx);
    agent = await startLocalAgent({ stack, apiKey: demo.counterKey, dataDir: config.dataDir, logger, devices: { printer: options.printer, display: options.display } });
    const write = (line: string) => ctx.io.stdout.write(`${line}\n`);
    if (interactive) {
      // The keys get a screen of their own: printed above the counter they scroll off an 80×24 terminal.
      const { runTui } = await import('../tui/run.js');
      await runTui({
        api: new PosClient({ server: stack.server.url, apiKey: demo.counterKey }),
        agentUrl: agent?.url,
        color: ctx.config.color,
        notice: demo.created ? `Demo keys saved to profile "${demo.profileName}".` : undefined,
        intro: keyLines(demo),
        quitWarning: 'the server, the simulator and the agent',
      });
      // Shown once: they stay in the terminal after the counter closes.
      for (const line of keyLines(demo)) write(line);
      return;
    }
    for (const line of keyLines(demo)) write(line);
    logger.info({ url: stack.server.url, profile: demo.profileName, agent: agent?.url ?? null }, 'pos up ready');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
  } finally {
    // Staff pressed q: the counter's terminal must come back promptly. Shutdown is orderly (agent,
    // then server drain, then simulator), but if a drain or a close handshake stalls, exit anyway.
    setTimeout(() => process.exit(process.exitCode ?? 0), EXIT_DEADLINE_MS).unref();
    await agent?.close();
    await stack.close();
  }
}

/** How long quitting `pos up` may take before it exits regardless of what is still closing. */
const EXIT_DEADLINE_MS = 4_000;

export async function tui(_args: [], options: { agent?: string }, ctx: CliContext): Promise<void> {
  if (!ctx.io.stdout.isTTY || !ctx.io.stdin.isTTY) throw new CliError('pos tui needs a terminal (use the other commands with --json in scripts)', ExitCode.usage);
  await ctx.api.merchant();
  const { runTui } = await import('../tui/run.js');
  await runTui({ api: ctx.api, agentUrl: options.agent, color: ctx.config.color });
}
