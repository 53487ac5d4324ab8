import type { Command } from 'commander';
import { loadCliSettings, type CliSettings } from '../shared/config.js';
import { PosClient } from './api.js';
import { noKeyMessage, ProfileStore, resolveTarget } from './profiles.js';
import { createOutput, type Output, warnOnStderr } from './output.js';

/** What every action receives as `ctx`: the API client, where to print, and the resolved configuration. */
export interface CliContext {
  api: PosClient;
  out: Output;
  config: CliSettings & { profileName: string; server: string; apiKey: string | undefined; profiles: ProfileStore };
}

export interface GlobalOptions {
  server?: string;
  apiKey?: string;
  profile?: string;
  json?: boolean;
}

export async function contextFrom(command: Command): Promise<CliContext> {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const settings = loadCliSettings(globals);
  const profiles = await ProfileStore.open(settings.configDir, warnOnStderr);
  const target = resolveTarget(profiles, settings);
  return {
    api: new PosClient({ server: target.server, apiKey: target.apiKey, noKey: noKeyMessage(profiles, target) }),
    out: createOutput(Boolean(globals.json)),
    config: { ...settings, ...target, profiles },
  };
}
