import { type Env, loadCliSettings } from '../shared/config.js';
import { usageError } from './errors.js';
import { noKeyMessage, ProfileStore, resolveTarget } from './profiles.js';

/**
 * For commands that take `--server`/`--api-key` flags and build their own client (listen, events,
 * trigger): fills both in from the profile when neither flag nor environment gave them, so
 * `pos login` (or `pos up`) once is enough for every command.
 */
export async function withProfile<F extends { server?: string | undefined; apiKey?: string | undefined; profile?: string | undefined }>(flags: F, env: Env): Promise<F> {
  const settings = loadCliSettings(flags, env);
  const store = await ProfileStore.open(settings.configDir);
  const target = resolveTarget(store, settings);
  if (target.missingProfile && !target.apiKey) throw usageError(noKeyMessage(store, target));
  return { ...flags, server: target.server, ...(target.apiKey ? { apiKey: target.apiKey } : {}) };
}
