import { createInterface } from 'node:readline';
import type { CliContext } from './context.js';
import { CliError, usageError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/**
 * Safe by default: what cannot be undone asks first, and live money moves only when asked to by name.
 * Both refusals exit 2 (a usage error: the invocation must change) and happen before any request
 * that changes something, so a refused command leaves everything as it was.
 */

/** Keys whose requests move real money: secret or restricted, live mode. */
const LIVE_KEY = /^(sk|rk)_live_/;

export function isLiveKey(apiKey: string | undefined): boolean {
  return apiKey !== undefined && LIVE_KEY.test(apiKey);
}

/** Refuses a command that moves money with a live key unless `--live` was given. */
export function requireLive(ctx: Pick<CliContext, 'config'>, live: boolean | undefined, what: string): void {
  if (live || !isLiveKey(ctx.config.apiKey)) return;
  throw usageError(`${what} moves live money with a live key (${ctx.config.apiKey?.slice(0, 8)}…): add --live to do it`);
}

/** A terminal to ask on: a person can both read the question (stderr) and answer it (stdin). */
function canAsk(ctx: Pick<CliContext, 'io'>): boolean {
  return Boolean(ctx.io.stdin.isTTY && ctx.io.stderr.isTTY);
}

/**
 * Asks "question [y/N]" on the terminal and goes on only on y or yes. Without a terminal (a script,
 * a pipe, CI) nobody can answer, so the command refuses unless `--yes` said the answer beforehand.
 */
export async function confirm(ctx: Pick<CliContext, 'io'>, yes: boolean | undefined, question: string): Promise<void> {
  if (yes) return;
  if (!canAsk(ctx)) throw usageError(`${question.replace(/\?$/, '')}: refused without a terminal to confirm on; nothing changed (add --yes to do it)`);
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr, terminal: false });
  try {
    // Input that ends before a line (Ctrl-D) is a no, not a hang.
    ctx.io.stderr.write(`${question} [y/N] `);
    const answer = await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    if (!/^\s*y(es)?\s*$/i.test(answer)) throw new CliError('not confirmed: nothing changed', ExitCode.usage);
  } finally {
    rl.close();
  }
}
