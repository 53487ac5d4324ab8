import { loadCliSettings } from '../shared/config.js';
import type { CliIo } from './io.js';
import { usageError } from './errors.js';
import { noKeyMessage, ProfileStore, resolveTarget } from './profiles.js';
import { warnOn } from './output.js';

/**
 * For commands that take `--server`/`--api-key` flags and build their own client (listen, events,
 * trigger): fills both in from the profile when neither flag nor environment gave them, so
 * `pos login` (or `pos up`) once is enough for every command.
 */
export async function withProfile<F extends { server?: string | undefined; apiKey?: string | undefined; profile?: string | undefined }>(flags: F, io: Pick<CliIo, 'env' | 'stderr'>): Promise<F> {
  const settings = loadCliSettings(flags, io.env);
  const store = await ProfileStore.open(settings.configDir, warnOn(io.stderr));
  const target = resolveTarget(store, settings);
  if (target.missingProfile && !target.apiKey) throw usageError(noKeyMessage(store, target));
  return { ...flags, server: target.server, ...(target.apiKey ? { apiKey: target.apiKey } : {}) };
}
