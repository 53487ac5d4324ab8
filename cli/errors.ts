import { ApiConnectionError, ApiRequestError } from '../shared/api/errors.js';
import { ConfigError } from '../shared/config.js';
import { ExitCode } from './exit-codes.js';
import { CONFLICT_WORDS } from './format.js';

/** A failure the CLI reports in one line with a chosen exit code. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.apiError,
  ) {
    super(message);
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, ExitCode.usage);
}

/** "message" → "message."; a sentence that already ends in a stop keeps it. */
function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?:…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/**
 * The one line any error becomes, for every command: the API's message, then what staff can do
 * about it ("message. hint"), then the code scripts match on, e.g.
 * `The reader is busy. The reader is busy with another payment: finish or cancel that one first. (reader_busy)`.
 */
export function errorLine(err: unknown): string {
  if (err instanceof ApiRequestError) {
    if (err.raw !== undefined) return `unexpected answer from the server (HTTP ${err.status}): ${err.error.message}`;
    const { message, code } = err.error;
    const hint = code && Object.hasOwn(CONFLICT_WORDS, code) ? CONFLICT_WORDS[code] : undefined;
    return `${hint ? `${sentence(message)} ${hint}` : message}${code ? ` (${code})` : ''}`;
  }
  if (err instanceof ApiConnectionError) {
    return err.during === 'stream' ? err.message : `${sentence(err.message)} Is \`pos server\` or \`pos up\` running?`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The exit code an error ends `pos` with (cli/exit-codes.ts). */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof ConfigError) return ExitCode.usage;
  return ExitCode.apiError;
}

/** Turns any error into one line on stderr and an exit code; the stack only with DEBUG set. */
export function reportError(err: unknown, debug: boolean, write: (line: string) => void): ExitCode {
  if (debug && err instanceof Error && err.stack) write(err.stack);
  write(`pos: ${errorLine(err)}`);
  return exitCodeOf(err);
}
