import type { Command } from 'commander';
import { lazy } from '../lazy.js';

export function registerUpCommands(program: Command): void {
  program
    .command('up')
    .description('Everything on one machine: server, simulator, a demo merchant with a simulated reader, and the counter TUI')
    .option('--port <port>', 'port of the API server (env POS_PORT, default 4242)')
    .option('--host <host>', 'address to bind (env POS_HOST, default 127.0.0.1)')
    .option('--data-dir <dir>', 'where the database lives (env POS_DATA_DIR, default ./.pos)')
    .option('--master-key-file <path>', 'the main key secrets and customer details are encrypted under (env POS_MASTER_KEY or POS_MASTER_KEY_FILE; default <data dir>/master.key, made on first start)')
    .option('--agent-listen <host:port>', 'where the agent serves the counter (env POS_AGENT_LISTEN; default 127.0.0.1:4848, or a free port when that one is taken)')
    .option('--no-tui', 'keep serving and log, even on a terminal')
    .option('--printer <device>', "the till's ESC/POS receipt printer, its cash drawer wired to it: a device path, usb:VID:PID or tcp:HOST:PORT (docs/counter-hardware.md)")
    .option('--display <device>', "the till's customer display: a device path or usb:VID:PID")
    .option('--simulate-live', 'let live-mode keys take simulated payments too (env POS_SIMULATE_LIVE=1); pages and receipts say so')
    .addHelpText(
      'after',
      '\nOn first run it creates a demo merchant, a test location and a simulated reader, prints the\ntest keys once and saves them to the profile, so `pos pay 10 --reader "Till 1" --wait` works\nfrom another shell. `npm start` runs this.',
    )
    .action(lazy(async () => (await import('./up-action.js')).up));

  program
    .command('tui')
    .description('Open the counter TUI against a running server (the profile’s)')
    .option('--agent <url>', 'ws:// URL of the shop’s agent for live reader state (default: poll the API)')
    .action(lazy(async () => (await import('./up-action.js')).tui));
}
