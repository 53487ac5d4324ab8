import { ConfigError } from '../shared/config.js';
import { ExitCode } from './exit-codes.js';

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

/** Turns any error into one line on stderr and an exit code; the stack only with DEBUG set. */
export function reportError(err: unknown, debug: boolean, write: (line: string) => void): ExitCode {
  if (debug && err instanceof Error && err.stack) write(err.stack);
  if (err instanceof CliError) {
    write(`pos: ${err.message}`);
    return err.exitCode;
  }
  if (err instanceof ConfigError) {
    write(`pos: ${err.message}`);
    return ExitCode.usage;
  }
  write(`pos: ${err instanceof Error ? err.message : String(err)}`);
  return ExitCode.apiError;
}
