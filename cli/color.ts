import { styleText } from 'node:util';
import type { Env } from '../shared/config.js';

export const COLOR_MODES = ['auto', 'always', 'never'] as const;
export type ColorMode = (typeof COLOR_MODES)[number];

/**
 * Whether to colour what goes to `stream`: `--color always|never` says so outright; `auto` follows
 * the no-color.org and CLICOLOR conventions (NO_COLOR set and non-empty: never; CLICOLOR_FORCE set
 * and not 0: always), else colour only a terminal, so a pipe or a file gets plain text.
 */
export function colorEnabled(mode: ColorMode | undefined, env: Env, stream: { isTTY?: boolean }): boolean {
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  if (env.NO_COLOR) return false;
  if (env.CLICOLOR_FORCE && env.CLICOLOR_FORCE !== '0') return true;
  return Boolean(stream.isTTY);
}

type Style = 'green' | 'red' | 'yellow';

/** Statuses by what they mean to staff: done well, gone wrong, still under way. */
const STATUS_STYLES: Record<string, Style> = {
  succeeded: 'green',
  paid: 'green',
  active: 'green',
  open: 'green',
  online: 'green',
  enabled: 'green',
  refunded: 'yellow',
  partially_refunded: 'yellow',
  pending: 'yellow',
  in_transit: 'yellow',
  requires_capture: 'yellow',
  needs_response: 'yellow',
  under_review: 'yellow',
  failed: 'red',
  canceled: 'red',
  revoked: 'red',
  expired: 'red',
  offline: 'red',
  lost: 'red',
  disabled: 'red',
};

export function paint(on: boolean, style: Style, text: string): string {
  // The decision is colorEnabled's, made for the stream the text goes to, not process.stdout's.
  return on && text ? styleText(style, text, { validateStream: false }) : text;
}

/** A status word in its colour (unknown words stay plain). */
export function paintStatus(on: boolean, status: string): string {
  const style = STATUS_STYLES[status];
  return style ? paint(on, style, status) : status;
}
