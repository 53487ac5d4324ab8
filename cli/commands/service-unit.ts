import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `pos` executable of this install: the checkout's or the global install's bin/pos.js. */
export function posBin(): string {
  return fileURLToPath(new URL('../../../bin/pos.js', import.meta.url));
}

/** Quotes one argument for a systemd ExecStart line. */
export function quote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\])/g, '\\$1')}"`;
}

export interface UnitSpec {
  description: string;
  /** The doc the unit points at, relative to the install's root. */
  doc: string;
  node: string;
  bin: string;
  args: string[];
  /** A system user to run as; without one systemd makes a user for the service (DynamicUser=). */
  user?: string | undefined;
  /** Under /var/lib, owned by the service's user and kept across restarts and upgrades. */
  stateDirectory: string;
  /** Holds the keys; only root reads it, systemd passes it on. */
  environmentFile: string;
  supplementaryGroups?: string[];
  /** How long SIGTERM may take before systemd kills. */
  timeoutStopSec: number;
}

/**
 * A unit that starts on a stock Debian or Ubuntu machine: no user to create (DynamicUser=, or the
 * one given), its state directory made by systemd, and the install's files left readable:
 * ProtectHome=read-only rather than true, since a checkout under /home is where `pos` may live.
 * Restarted on failure after 2 s: a crash loop costs little, and the processes back off themselves.
 */
export function renderUnit(o: UnitSpec): string {
  return `[Unit]
Description=${o.description}
Documentation=file://${resolve(dirname(o.bin), '..', o.doc)}
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
${o.user ? `User=${o.user}` : 'DynamicUser=yes'}
${o.supplementaryGroups?.length ? `SupplementaryGroups=${o.supplementaryGroups.join(' ')}\n` : ''}StateDirectory=${o.stateDirectory}
StateDirectoryMode=0700
EnvironmentFile=${o.environmentFile}
ExecStart=${[o.node, o.bin, ...o.args].map(quote).join(' ')}
Restart=on-failure
RestartSec=2
KillSignal=SIGTERM
TimeoutStopSec=${o.timeoutStopSec}
NoNewPrivileges=true
ProtectSystem=full
ProtectHome=read-only
PrivateTmp=true

[Install]
WantedBy=multi-user.target
`;
}
