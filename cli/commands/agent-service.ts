import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadAgentConfig } from '../../shared/config.js';

export interface ServiceOptions {
  server?: string;
  apiKey?: string;
  dataDir?: string;
  listen?: string;
  token?: string;
  simulate?: string;
  printer?: string;
  display?: string;
  user: string;
  unitDir: string;
  envFile: string;
  print?: boolean;
}

export const UNIT_NAME = 'pos-agent.service';

/** Quotes one argument for a systemd ExecStart line. */
function quote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\])/g, '\\$1')}"`;
}

/**
 * The unit: restarted on failure after 2 s (a crash loop costs little, and the agent's own
 * backoff handles an unreachable server), the key in an environment file only root can read, and
 * the serial printer and display reachable through the dialout group.
 */
export function renderUnit(o: { node: string; bin: string; user: string; envFile: string; args: string[] }): string {
  return `[Unit]
Description=pos on-premise agent (card readers, counter websocket)
Documentation=file://${resolve(dirname(o.bin), '..', 'docs', 'agent.md')}
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User=${o.user}
SupplementaryGroups=dialout
EnvironmentFile=${o.envFile}
ExecStart=${[o.node, o.bin, 'agent', ...o.args].map(quote).join(' ')}
Restart=on-failure
RestartSec=2
# SIGTERM sends goodbye upstream (readers go offline at once) and flushes the report queue.
KillSignal=SIGTERM
TimeoutStopSec=10
NoNewPrivileges=true
ProtectSystem=full
ProtectHome=true

[Install]
WantedBy=multi-user.target
`;
}

export async function installService(given: ServiceOptions): Promise<void> {
  const options = { ...given, dataDir: given.dataDir ?? '/var/lib/pos-agent', listen: given.listen ?? '127.0.0.1:4848' };
  const args = ['--data-dir', options.dataDir, '--listen', options.listen];
  if (options.simulate) args.push('--simulate', options.simulate);
  if (options.printer) args.push('--printer', options.printer);
  if (options.display) args.push('--display', options.display);
  // Validates the whole configuration now rather than when the service first starts.
  const config = loadAgentConfig({
    server: options.server,
    apiKey: options.apiKey,
    dataDir: options.dataDir,
    listen: options.listen,
    token: options.token,
    simulate: options.simulate,
    printer: options.printer,
    display: options.display,
  });
  const env = [`POS_SERVER_URL=${config.serverUrl}`, `POS_API_KEY=${config.apiKey}`, ...(config.token ? [`POS_AGENT_TOKEN=${config.token}`] : [])].join('\n') + '\n';
  const bin = fileURLToPath(new URL('../../../bin/pos.js', import.meta.url));
  const unit = renderUnit({ node: process.execPath, bin, user: options.user, envFile: options.envFile, args });
  if (options.print) {
    process.stdout.write(`# ${join(options.unitDir, UNIT_NAME)}\n${unit}\n# ${options.envFile} (mode 0600)\n${env.replace(/(POS_API_KEY=sk_\w+?_)\w+/, '$1…')}`);
    return;
  }
  try {
    mkdirSync(dirname(options.envFile), { recursive: true });
    writeFileSync(options.envFile, env, { mode: 0o600 });
    chmodSync(options.envFile, 0o600);
    mkdirSync(options.unitDir, { recursive: true });
    writeFileSync(join(options.unitDir, UNIT_NAME), unit);
  } catch (err) {
    throw new ConfigError(`could not write the service files (${err instanceof Error ? err.message : String(err)}); run as root or pass --unit-dir/--env-file`);
  }
  process.stdout.write(
    `Wrote ${join(options.unitDir, UNIT_NAME)} and ${options.envFile}.\nStart it with: sudo systemctl daemon-reload && sudo systemctl enable --now pos-agent\n`,
  );
}
