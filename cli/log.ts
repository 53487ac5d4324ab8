import pino from 'pino';
import { PinoPretty } from 'pino-pretty';
import type { Writable } from 'node:stream';
import type { Env } from '../shared/config.js';
import { colorEnabled } from './color.js';

/**
 * The logger of a long-running `pos server` or `pos agent`: on a terminal, lines a person reads
 * (time, level, message, then the fields); anywhere else (a service unit, a pipe, a file) pino's
 * JSON lines, one object each, for whatever collects them. Colour follows NO_COLOR/CLICOLOR_FORCE.
 */
export function processLogger(level: string, stream: Writable & { isTTY?: boolean; fd?: number }, env: Env): pino.Logger {
  if (!stream.isTTY) return pino({ level }, stream);
  // In this thread, not as a worker transport: a log line is written before a crash can lose it.
  // A process stream by its descriptor, so ending the logger never ends the process's stdout.
  const pretty = PinoPretty({ destination: typeof stream.fd === 'number' ? stream.fd : stream, colorize: colorEnabled('auto', env, stream), translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true });
  return pino({ level }, pretty);
}
