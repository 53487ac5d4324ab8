import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { posBin, renderUnit } from './service-unit.js';
import { PosApi } from '../../shared/api/client.js';
import { ConfigError, loadAgentConfig } from '../../shared/config.js';
import { createPrivateDir, writePrivateFile } from '../../shared/files.js';
import type { CliIo } from '../io.js';

export interface ServiceOptions {
  server?: string;
  apiKey?: string;
  dataDir?: string;
  listen?: string;
  token?: string;
  simulate?: string;
  printer?: string;
  display?: string;
  user?: string;
  unitDir: string;
  secretsFile: string;
  print?: boolean;
}

export const UNIT_NAME = 'pos-agent.service';

/** Where systemd's StateDirectory=pos-agent is: the agent's data dir unless another is given. */
const STATE_DIR = '/var/lib/pos-agent';

export async function installService(given: ServiceOptions, io: CliIo): Promise<void> {
  const options = { ...given, dataDir: given.dataDir ?? STATE_DIR, listen: given.listen ?? '127.0.0.1:4848' };
  const args = ['--data-dir', options.dataDir, '--listen', options.listen];
  if (options.simulate) args.push('--simulate', options.simulate);
  if (options.printer) args.push('--printer', options.printer);
  if (options.display) args.push('--display', options.display);
  // Validates the whole configuration now rather than when the service first starts.
  const config = loadAgentConfig(
    {
      server: options.server,
      apiKey: options.apiKey,
      dataDir: options.dataDir,
      listen: options.listen,
      token: options.token,
      simulate: options.simulate,
      printer: options.printer,
      display: options.display,
    },
    io.env,
  );
  const unit = renderUnit({
    description: 'pos on-premise agent (card readers, counter websocket)',
    doc: 'docs/agent.md',
    node: process.execPath,
    bin: posBin(),
    args: ['agent', ...args],
    user: options.user,
    stateDirectory: 'pos-agent',
    environmentFile: options.secretsFile,
    // Serial printers and displays belong to the dialout group.
    supplementaryGroups: ['dialout'],
    // SIGTERM sends goodbye upstream (readers go offline at once) and flushes the report queue.
    timeoutStopSec: 10,
  });
  const envFile = (key: string) => [`POS_SERVER_URL=${config.serverUrl}`, `POS_API_KEY=${key}`, ...(config.token ? [`POS_AGENT_TOKEN=${config.token}`] : [])].join('\n') + '\n';
  const mode = config.apiKey.includes('_live_') ? 'live' : 'test';
  if (options.print) {
    const shown = config.apiKey.startsWith('rk_') ? `${config.apiKey.slice(0, 8)}…` : `rk_${mode}_… (a new counter key, made when the files are written)`;
    io.stdout.write(`# ${join(options.unitDir, UNIT_NAME)}\n${unit}\n# ${options.secretsFile} (mode 0600)\n${envFile(shown)}`);
    return;
  }
  const key = await counterKeyFor(config.serverUrl, config.apiKey);
  try {
    // The key file: owner-only from its first byte, and a missing directory for it owner-only too
    // (an existing one, such as /etc, is not ours to change).
    createPrivateDir(dirname(options.secretsFile));
    await writePrivateFile(options.secretsFile, envFile(key.key));
    // The unit holds no secret and is read by systemd and `systemctl cat` as any unit is.
    mkdirSync(options.unitDir, { recursive: true });
    writeFileSync(join(options.unitDir, UNIT_NAME), unit);
  } catch (err) {
    // A key made for files that could not be written would only linger unseen: take it back.
    if (key.made) await new PosApi({ server: config.serverUrl, apiKey: config.apiKey }).revokeApiKey(key.made.id).catch(() => undefined);
    throw new ConfigError(`could not write the service files (${err instanceof Error ? err.message : String(err)}); run as root or pass --unit-dir/--env-file`);
  }
  const made = key.made ? `The agent uses a new restricted key "${key.made.name}" (${key.made.id}, preset counter: payments on readers, no refunds, no keys); the secret key was not written.\n` : '';
  io.stdout.write(
    `Wrote ${join(options.unitDir, UNIT_NAME)} and ${options.secretsFile}.\n${made}Start it with: sudo systemctl daemon-reload && sudo systemctl enable --now pos-agent\n`,
  );
}

/**
 * The shop PC gets a restricted key, never the secret one: given a secret key, a counter-preset key
 * is made with it for this machine; a restricted key given is used as it is.
 */
async function counterKeyFor(server: string, apiKey: string): Promise<{ key: string; made?: { id: string; name: string } }> {
  if (apiKey.startsWith('rk_')) return { key: apiKey };
  const api = new PosApi({ server, apiKey });
  const made = (await api.createApiKey({ name: `pos agent on ${hostname()}`.slice(0, 100), preset: 'counter' })).data;
  if (!made.secret) throw new ConfigError('the server made a counter key but did not show it');
  return { key: made.secret, made: { id: made.id, name: made.name ?? '' } };
}
