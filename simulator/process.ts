import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { ConfigError } from '../shared/config.js';
import type { KeySource } from '../shared/crypto/key-source.js';
import type { LooseFile } from '../shared/files.js';
import type { PlatformKeys } from './http/endpoint.js';
import type { SimulatorOptions } from './index.js';

/**
 * The embedded simulator in a child process of its own, for `pos server` and `pos up`: the
 * processor's work (its SQLite commits, its own HTTP app) runs on another core instead of on the
 * server's event loop. The server reaches it over HTTP exactly as it does in process; this module
 * only starts it, watches it, restarts it when it dies, and stops it after the server has drained.
 */

const CHILD_ENTRY = fileURLToPath(new URL('./child.js', import.meta.url));

/** The simulator's settings that cross the process boundary: plain values, no functions. */
export type ChildSettings = Pick<SimulatorOptions, 'dataDir' | 'port' | 'host' | 'rateLimits' | 'authorizationDelayMs' | 'achSettlementDelayMs' | 'disputeDelayMs' | 'verificationDelayMs' | 'accountLinkTtlMs'> & {
  /** Where its main keys are: the server's own source, read again by the child. */
  keySource: KeySource;
  /** Send its log lines (one per request) to the parent: only when they are logged, as each one crosses the channel. */
  forwardLog?: boolean;
};

export type ToChild = { type: 'start'; settings: ChildSettings } | { type: 'close' };

export type FromChild =
  | { type: 'listening'; url: string; host: string; port: number; keys: PlatformKeys }
  | { type: 'failed'; name: string; message: string; code?: string }
  | { type: 'log'; line: string }
  | { type: 'loose'; found: LooseFile };

export interface SimulatorProcessLogger {
  isLevelEnabled(level: 'debug'): boolean;
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface SimulatorProcessOptions {
  settings: ChildSettings;
  logger: SimulatorProcessLogger;
  onLooseFile?: (found: LooseFile) => void;
  /** Told when the simulator died and when it answers again, so readiness can say so at once. */
  onAvailability?: (available: boolean) => void;
  /** The child forked earlier (`launchSimulatorProcess`) to start first; by default one is forked now. */
  launched?: SimulatorLaunch;
}

export interface SimulatorProcess {
  url: string;
  host: string;
  port: number;
  protocol: 'http';
  keys: PlatformKeys;
  /** The child's pid (it changes on a restart). */
  readonly pid: number | undefined;
  close(): Promise<void>;
}

/**
 * How long a start may take before it is given up: opening and migrating the simulator's store
 * and listening takes well under a second, a cold disk a few; 30 s means it is stuck.
 */
const START_TIMEOUT_MS = 30_000;

/** How long the child gets to finish its deliveries and close its store once asked; then it is killed. */
const CLOSE_TIMEOUT_MS = 10_000;

/**
 * Restart back-off after a crash: one second first (a one-off crash costs the server a second of
 * processor errors), doubling to at most 30 s so a simulator that dies on start does not spin.
 */
const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 30_000;

/** A child that stayed up this long was healthy: its next crash starts the back-off again. */
const HEALTHY_AFTER_MS = 60_000;

/** Lines of the child's stderr kept for the crash report (a stack trace fits). */
const STDERR_LINES = 30;

/** A child forked and loading its code, not yet told to start: see `launchSimulatorProcess`. */
export interface SimulatorLaunch {
  readonly child: ChildProcess;
  /** Its last stderr lines, for a crash report. */
  readonly stderr: string[];
  /** Ends a child that will not be started (the stack failed first). */
  discard(): void;
}

/**
 * Forks the simulator's process now; `startSimulatorProcess({ launched })` starts it later. Node's
 * own start-up and the simulator's module loading then overlap with the server's.
 */
export function launchSimulatorProcess(): SimulatorLaunch {
  // An inspector port cannot be shared with the parent; profiling and other flags are inherited.
  const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--inspect'));
  const child = fork(CHILD_ENTRY, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced', execArgv });
  const stderr: string[] = [];
  if (child.stderr) {
    createInterface({ input: child.stderr, crlfDelay: Infinity }).on('line', (line) => {
      stderr.push(line);
      if (stderr.length > STDERR_LINES) stderr.shift();
    });
  }
  return {
    child,
    stderr,
    discard() {
      // Without a start, the channel closing is what ends it.
      if (child.connected) child.disconnect();
    },
  };
}

function rebuiltError(failed: Extract<FromChild, { type: 'failed' }>): Error {
  if (failed.name === 'ConfigError') return new ConfigError(failed.message);
  const err: NodeJS.ErrnoException = new Error(failed.message);
  if (failed.code) err.code = failed.code;
  return err;
}

interface Started {
  child: ChildProcess;
  listening: Extract<FromChild, { type: 'listening' }>;
  stderr: string[];
}

function startChild(settings: ChildSettings, options: SimulatorProcessOptions, launched: SimulatorLaunch = launchSimulatorProcess()): Promise<Started> {
  const { child, stderr } = launched;
  child.on('message', (message: FromChild) => {
    if (message.type === 'log') options.logger.debug({ component: 'simulator' }, message.line);
    else if (message.type === 'loose') options.onLooseFile?.(message.found);
  });
  return new Promise<Started>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the embedded simulator did not start within ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    const onMessage = (message: FromChild): void => {
      if (message.type === 'listening') {
        settle();
        resolve({ child, listening: message, stderr });
      } else if (message.type === 'failed') {
        settle();
        reject(rebuiltError(message));
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      settle();
      reject(new Error(`the embedded simulator exited (${signal ?? code}) before listening${stderr.length ? `:\n${stderr.join('\n')}` : ''}`));
    };
    const settle = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ type: 'start', settings } satisfies ToChild);
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startSimulatorProcess(options: SimulatorProcessOptions): Promise<SimulatorProcess> {
  options = { ...options, settings: { ...options.settings, forwardLog: options.logger.isLevelEnabled('debug') } };
  const first = await startChild(options.settings, options, options.launched);
  const { url, host, port, keys } = first.listening;
  // A restart listens where the server's client already points.
  const again: ChildSettings = { ...options.settings, port };
  let current: ChildProcess | undefined = first.child;
  let closing = false;
  let delayMs = RESTART_FIRST_MS;
  let restartTimer: NodeJS.Timeout | undefined;

  const watch = (started: Started): void => {
    const upSince = Date.now();
    started.child.once('exit', (code, signal) => {
      if (closing) return;
      current = undefined;
      if (Date.now() - upSince >= HEALTHY_AFTER_MS) delayMs = RESTART_FIRST_MS;
      options.logger.error(
        { code, signal, stderr: started.stderr.join('\n') || undefined, restart_in_ms: delayMs },
        'the embedded simulator exited unexpectedly: processor calls fail until it is restarted',
      );
      options.onAvailability?.(false);
      scheduleRestart();
    });
  };
  const scheduleRestart = (): void => {
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      startChild(again, options).then(
        (started) => {
          if (closing) {
            started.child.send({ type: 'close' } satisfies ToChild);
            return;
          }
          current = started.child;
          watch(started);
          options.logger.info({ url, pid: started.child.pid }, 'the embedded simulator restarted');
          options.onAvailability?.(true);
        },
        (err: unknown) => {
          options.logger.error({ err, restart_in_ms: delayMs }, 'the embedded simulator could not be restarted');
          if (!closing) scheduleRestart();
        },
      );
    }, delayMs);
    delayMs = Math.min(delayMs * 2, RESTART_MAX_MS);
  };
  watch(first);

  let closed: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    protocol: 'http',
    keys,
    get pid() {
      return current?.pid;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        clearTimeout(restartTimer);
        const child = current;
        if (!child) return;
        const done = exited(child);
        if (child.connected) child.send({ type: 'close' } satisfies ToChild);
        const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
        await done;
        clearTimeout(timer);
      })();
      return closed;
    },
  };
}
