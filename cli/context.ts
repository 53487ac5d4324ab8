import type { Command } from 'commander';
import { loadCliSettings, type CliSettings } from '../shared/config.js';
import { PosClient } from './api.js';
import { type CliIo, ioOf } from './io.js';
import { noKeyMessage, ProfileStore, resolveTarget } from './profiles.js';
import type { ColorMode } from './color.js';
import { createOutput, type Output, type OutputFormat, warnOn } from './output.js';

/**
 * What every action receives as `ctx`: the API client, where to print, the resolved configuration,
 * and the run's streams and environment for what `out` does not cover (is this a terminal?).
 */
export interface CliContext {
  api: PosClient;
  out: Output;
  config: CliSettings & { profileName: string; server: string; apiKey: string | undefined; profiles: ProfileStore };
  io: CliIo;
}

export interface GlobalOptions {
  server?: string;
  apiKey?: string;
  profile?: string;
  json?: boolean;
  format?: OutputFormat;
  fields?: string;
  color?: ColorMode;
}

export async function contextFrom(command: Command): Promise<CliContext> {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const io = ioOf(command);
  const settings = loadCliSettings(globals, io.env);
  const profiles = await ProfileStore.open(settings.configDir, warnOn(io.stderr));
  const target = resolveTarget(profiles, settings);
  return {
    api: new PosClient({ server: target.server, apiKey: target.apiKey, noKey: noKeyMessage(profiles, target) }),
    out: createOutput(globals, io),
    config: { ...settings, ...target, profiles },
    io,
  };
}
