import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { loadServerConfig, loadUpAgentListen, type ServerConfig } from '../../shared/config.js';
import { privateDir, privateFile, warnLooseFiles, type LooseFile } from '../../shared/files.js';
import { systemClock } from '../../shared/time.js';
import { createMerchant } from '../../server/accounts/merchants.js';
import { ApiRequestError } from '../../shared/api/errors.js';
import { PosClient } from '../api.js';
import type { CliContext } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { DataDirLock } from '../data-dir-lock.js';
import { DEFAULT_PROFILE } from '../profiles.js';
import { startStack, type Stack } from '../stack.js';
import { startLocalAgent, type LocalAgent, type LocalDevices } from '../up-agent.js';

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
  /** False when the profile belongs to another running `pos up`: the keys were shown, not saved. */
  saved: boolean;
  keys?: Record<string, string>;
}

/** Whether a profile's loopback address is another pos that is still running (answers /healthz). */
async function heldByAnotherPos(server: string | undefined, ours: string): Promise<boolean> {
  if (!server || server === ours || !isLoopback(server)) return false;
  try {
    // A local server answers at once; a second is plenty and a dead port fails sooner.
    return (await fetch(`${server}/healthz`, { signal: AbortSignal.timeout(1_000) })).ok;
  } catch {
    return false;
  }
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
  const heldElsewhere = await heldByAnotherPos(existing?.server, url);
  if ((existing?.api_key && !isLoopback(existing.server)) || heldElsewhere) profileName = 'local';
  // A profile is rewritten only by the pos that made it: while another `pos up` (another data dir)
  // still answers at the profile's address, this one keeps its keys to itself.
  const saving = profileName === ctx.config.profileName || !(await heldByAnotherPos(profiles.get(profileName)?.server, url));
  const profile = saving ? profiles.get(profileName) : undefined;

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
    if (saving) {
      await profiles.update(profileName, { server: url, api_key: merchant.keys.sk_test, merchant_id: merchant.merchant.id, business_name: merchant.merchant.businessName });
      const switching = profileName !== ctx.config.profileName || !profiles.get(profiles.currentName)?.api_key || profiles.currentName === DEFAULT_PROFILE;
      if (switching && !heldElsewhere) await profiles.use(profileName);
    }
  } else if (profile?.server !== url) {
    await profiles.update(profileName, { server: url });
  }
  if ((await api.listLocations()).data.length === 0) await api.createLocation(DEMO_LOCATION);
  if ((await api.listReaders()).data.length === 0) await api.registerReader({ name: DEMO_READER, registration_code: 'simulated-wpe' });
  const counterKey = await ensureCounterKey(api, ctx, profileName, created, saving);
  if (keys) keys.counter = counterKey;
  return { api, apiKey, counterKey, profileName, created, saved: saving, ...(keys ? { keys } : {}) };
}

/** The counter's key name on the demo merchant's key list. */
export const COUNTER_KEY_NAME = 'pos up counter';

/**
 * The shop PC should not hold the secret key: the agent and the counter get a restricted key with
 * the counter preset (payments on readers, no refunds, no keys). Made once and kept in the
 * profile beside the secret key; made again if it stopped working (revoked) or the merchant is new.
 */
async function ensureCounterKey(api: PosClient, ctx: CliContext, profileName: string, newMerchant: boolean, saving: boolean): Promise<string> {
  const saved = saving ? ctx.config.profiles.get(profileName)?.counter_key : undefined;
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
  if (saving) await ctx.config.profiles.update(profileName, { counter_key: made.secret });
  return made.secret;
}

function keyLines(demo: Demo): string[] {
  if (!demo.keys) return [];
  return [
    demo.saved
      ? `Demo merchant "${DEMO_BUSINESS}" created. Its keys are shown once; the test secret key is saved to profile "${demo.profileName}", and the counter and its agent use the restricted counter key (no refunds, no keys).`
      : `Demo merchant "${DEMO_BUSINESS}" created. Its keys are shown once and not saved: profile "${demo.profileName}" belongs to another pos up that is still running. The counter and its agent use the restricted counter key (no refunds, no keys).`,
    ...Object.entries(demo.keys).map(([name, key]) => `  ${name.padEnd(8)} ${key}`),
  ];
}

export async function up(
  _args: [],
  options: { port?: string; host?: string; dataDir?: string; masterKeyFile?: string; agentListen?: string; tui: boolean; simulateLive?: boolean; printer?: string; display?: string },
  ctx: CliContext,
): Promise<void> {
  const interactive = options.tui && Boolean(ctx.io.stdout.isTTY) && Boolean(ctx.io.stdin.isTTY);
  const config = loadServerConfig({ port: options.port, host: options.host, dataDir: options.dataDir, masterKeyFile: options.masterKeyFile, simulateLive: options.simulateLive }, ctx.io.env);
  const agentListen = loadUpAgentListen({ agentListen: options.agentListen }, ctx.io.env);
  // Before any file of the data dir is touched: a second `pos up` on it stops here.
  const lock = DataDirLock.acquire(config.dataDir, 'pos up');
  try {
    await upLocked(config, { interactive, agentListen, lock, devices: { printer: options.printer, display: options.display } }, ctx);
  } finally {
    lock.release();
  }
}

async function upLocked(config: ServerConfig, run: { interactive: boolean; agentListen: string | undefined; lock: DataDirLock; devices: LocalDevices }, ctx: CliContext): Promise<void> {
  const { interactive } = run;
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
  // From here on a signal stops `pos up` as quitting does: the same orderly shutdown, logged, exit 0.
  // SIGHUP is the terminal closing; SIGINT only without the TUI (the TUI reads Ctrl-C as a key).
  const stopping = new AbortController();
  let stopSignal: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopSignal) return;
    stopSignal = signal;
    stopping.abort();
  };
  const signals: NodeJS.Signals[] = interactive ? ['SIGTERM', 'SIGHUP'] : ['SIGTERM', 'SIGHUP', 'SIGINT'];
  for (const signal of signals) process.on(signal, onSignal);
  let stack: Stack | undefined;
  let agent: LocalAgent | undefined;
  try {
    try {
      stack = await startStack(config, { logger, simulatorProcess: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw usageError(`port ${config.port} is in use: is another pos already running? (pos up --port 4343)`);
      throw err;
    }
    run.lock.listening(stack.server.port);
    const demo = await ensureDemo(stack, ctx);
    try {
      agent = await startLocalAgent({ stack, apiKey: demo.counterKey, dataDir: config.dataDir, logger, listen: run.agentListen, devices: run.devices });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw usageError(`the agent's address ${run.agentListen ?? ''} is in use: choose another with --agent-listen or POS_AGENT_LISTEN`);
      throw err;
    }
    const write = (line: string) => ctx.io.stdout.write(`${line}\n`);
    if (interactive) {
      if (!stopping.signal.aborted) {
        // The keys get a screen of their own: printed above the counter they scroll off an 80×24 terminal.
        const { runTui } = await import('../tui/run.js');
        await runTui({
          api: new PosClient({ server: stack.server.url, apiKey: demo.counterKey }),
          agentUrl: agent.url,
          color: ctx.config.color,
          notice: demo.created ? (demo.saved ? `Demo keys saved to profile "${demo.profileName}".` : `Demo keys not saved: profile "${demo.profileName}" belongs to another running pos up.`) : undefined,
          intro: keyLines(demo),
          quitWarning: 'the server, the simulator and the agent',
          stop: stopping.signal,
        });
      }
      // Shown once: they stay in the terminal after the counter closes (a hung-up one has none).
      if (stopSignal !== 'SIGHUP') for (const line of keyLines(demo)) write(line);
      return;
    }
    for (const line of keyLines(demo)) write(line);
    logger.info({ url: stack.server.url, profile: demo.profileName, agent: agent.url }, 'pos up ready');
    if (!stopping.signal.aborted) await new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
  } finally {
    // Staff pressed q: the counter's terminal must come back promptly. Shutdown is orderly (agent,
    // then server drain, then simulator), but if a drain or a close handshake stalls, exit anyway.
    setTimeout(() => process.exit(process.exitCode ?? 0), EXIT_DEADLINE_MS).unref();
    if (stack) logger.info({ signal: stopSignal ?? null, reason: stopSignal ? 'signal' : 'quit' }, 'pos up stopping');
    try {
      await agent?.close();
      await stack?.close();
      if (stack) logger.info('pos up stopped');
    } finally {
      for (const signal of signals) process.removeListener(signal, onSignal);
      await flushLog(logger);
    }
  }
}

/** The log file is written asynchronously: its last lines reach the disk before the process ends. */
function flushLog(logger: Logger): Promise<void> {
  return new Promise((resolve) => {
    try {
      logger.flush(() => resolve());
    } catch {
      resolve();
    }
  });
}

/** How long quitting `pos up` may take before it exits regardless of what is still closing. */
const EXIT_DEADLINE_MS = 4_000;

export async function tui(_args: [], options: { agent?: string }, ctx: CliContext): Promise<void> {
  if (!ctx.io.stdout.isTTY || !ctx.io.stdin.isTTY) throw new CliError('pos tui needs a terminal (use the other commands with --json in scripts)', ExitCode.usage);
  await ctx.api.merchant();
  const { runTui } = await import('../tui/run.js');
  await runTui({ api: ctx.api, agentUrl: options.agent, color: ctx.config.color });
}
