import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, loadServerConfig, type ServerFlags } from '../../shared/config.js';
import { createPrivateDir, writePrivateFile } from '../../shared/files.js';
import type { CliIo } from '../io.js';
import { posBin, renderUnit } from './service-unit.js';

export const SERVER_UNIT_NAME = 'pos-server.service';

/** Where systemd's StateDirectory=pos is: the server's data dir (its main key file by default). */
const STATE_DIR = '/var/lib/pos';

/** The environment a server reads that belongs in its secrets file rather than on its command line. */
const CARRIED = /^(DATABASE_URL|POS_[A-Z_]+|STRIPE_[A-Z_]+)$/;

/** Set for the shell `pos` runs in, never for the service. */
const NOT_CARRIED = new Set(['POS_SERVER_URL', 'POS_API_KEY', 'POS_PROFILE', 'POS_CONFIG_DIR', 'POS_DATA_DIR']);

export interface ServerServiceOptions {
  port?: string;
  host?: string;
  role?: string;
  unitDir: string;
  secretsFile: string;
  print?: boolean;
}

/**
 * `pos server install-service`: a systemd unit running `pos server` on /var/lib/pos, and a secrets
 * file (0600, read by systemd as root) holding the environment `pos` was run with that the server
 * reads (DATABASE_URL, STRIPE_*, POS_*), so the same command line that ran by hand runs as a service.
 */
export async function installServerService(given: ServerServiceOptions, io: CliIo): Promise<void> {
  const carried = Object.entries(io.env)
    .filter((entry): entry is [string, string] => CARRIED.test(entry[0]) && !NOT_CARRIED.has(entry[0]) && entry[1] !== undefined && entry[1] !== '')
    .sort(([a], [b]) => a.localeCompare(b));
  const flags: ServerFlags = { dataDir: STATE_DIR, port: given.port, host: given.host, role: given.role };
  // Refused now, with the reason, rather than in the journal when the service first starts.
  const config = loadServerConfig(flags, Object.fromEntries(carried));
  const args = ['server', '--data-dir', STATE_DIR, '--port', String(config.port), '--host', config.host, ...(config.role !== 'all' ? ['--role', config.role] : [])];
  const unit = renderUnit({
    description: `pos server${config.role !== 'all' ? ` (${config.role})` : ''}`,
    doc: 'docs/deployment.md',
    node: process.execPath,
    bin: posBin(),
    args,
    stateDirectory: 'pos',
    environmentFile: given.secretsFile,
    // The server drains for up to 25 s on SIGTERM (server/main.ts); systemd waits a little longer.
    timeoutStopSec: 30,
  });
  const secrets = carried.map(([k, v]) => `${k}=${v}`).join('\n') + (carried.length ? '\n' : '');
  if (given.print) {
    io.stdout.write(`# ${join(given.unitDir, SERVER_UNIT_NAME)}\n${unit}\n# ${given.secretsFile} (mode 0600)\n${carried.map(([k]) => `${k}=…`).join('\n')}\n`);
    return;
  }
  try {
    createPrivateDir(dirname(given.secretsFile));
    await writePrivateFile(given.secretsFile, secrets);
    mkdirSync(given.unitDir, { recursive: true });
    writeFileSync(join(given.unitDir, SERVER_UNIT_NAME), unit);
  } catch (err) {
    throw new ConfigError(`could not write the service files (${err instanceof Error ? err.message : String(err)}); run as root or pass --unit-dir/--secrets-file`);
  }
  io.stdout.write(
    `Wrote ${join(given.unitDir, SERVER_UNIT_NAME)} and ${given.secretsFile} (${carried.map(([k]) => k).join(', ') || 'no variables'}).\nStart it with: sudo systemctl daemon-reload && sudo systemctl enable --now pos-server\n`,
  );
}
