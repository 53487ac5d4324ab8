import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgent, type AgentProcess } from './helpers/agent.js';
import { POS_BIN } from './helpers/cli.js';
import { seedDataDir } from './helpers/db.js';
import { adminMerchant, spawnServer, type ServerProcess } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';
import { Tmux } from './helpers/tmux.js';
import { haveTmux } from './helpers/tools.js';

// @backend-once what the counter's terminal shows through a server outage (tmux, an agent process); a server restarted on the same ledger is payments-restart's and webhooks-restart's, on both backends.

/**
 * The counter through a server outage: `pos tui` on a real agent, the server stopped and started
 * again on the same port. While it is down the screen says so and claims nothing it cannot know
 * (no reader "online", no "card read"); once it is back, the screen catches up by itself and the
 * errors of the outage go away.
 */
const hasTmux = haveTmux();
const serverDir = tempDir('pos-resync-server-');
const agentDir = tempDir('pos-resync-agent-');
const configDir = tempDir('pos-resync-config-');
const tmux = new Tmux();
const S = 'resync';
/** Quick heartbeats so the reader is online and followed within a second. */
const HEARTBEAT_MS = 1_000;

let server: ServerProcess;
let agent: AgentProcess;
let key: string;
let port: string;

describe.skipIf(!hasTmux)('the counter through a server outage (tmux, pos tui on an agent)', () => {
  beforeAll(async () => {
    seedDataDir(serverDir.path);
    key = (await adminMerchant(serverDir.path, 'Resync Shop')).api_keys.sk_test;
    server = await spawnServer(serverDir.path);
    port = new URL(server.url).port;
    agent = await spawnAgent(['--server', server.url, '--api-key', key, '--data-dir', agentDir.path, '--simulate', '1', '--heartbeat-ms', String(HEARTBEAT_MS)]);
    await agent.logged('upstream connected');
    tmux.start(S, [`POS_CONFIG_DIR=${configDir.path}`, `POS_SERVER_URL=${server.url}`, `POS_API_KEY=${key}`, process.execPath, POS_BIN, 'tui', '--agent', agent.url]);
  });
  afterAll(async () => {
    tmux.kill();
    await agent?.stop('SIGKILL');
    server?.child.kill('SIGTERM');
    await server?.exited;
    for (const d of [serverDir, agentDir, configDir]) d.cleanup();
  });

  it('shows the loss, claims no card read, and catches up when the server is back', async () => {
    await tmux.waitFor(S, /● connected \(agent\)[\s\S]*● online/, 20_000);
    tmux.burst(S, '12\r');
    await tmux.waitFor(S, /WAITING FOR CARD on \S+ \S+: \$12\.00/);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    // The agent keeps the till selling cash: the header says so, the payment on the reader stays as last known.
    const lost = await tmux.waitFor(S, 'OFFLINE: cash only');
    expect(lost).toContain('Connection lost: this screen shows the payment as last known');

    // A simulated tap cannot reach the simulator: the screen says so, and does not claim a card was read.
    tmux.keys(S, 's');
    const refused = await tmux.waitFor(S, 'The server cannot be reached');
    expect(refused).not.toMatch(/PROCESSING|Card read|fetch failed/);
    expect(refused).toMatch(/WAITING FOR CARD/);

    server = await spawnServer(serverDir.path, ['--port', port]);
    const back = await tmux.waitFor(S, '● connected (agent)', 30_000);
    expect(back).not.toContain('OFFLINE');
    await tmux.waitWithout(S, 'The server cannot be reached', 10_000);
    await tmux.waitWithout(S, 'Connection lost');

    // The payment survived the outage and goes through now.
    tmux.keys(S, 's');
    await tmux.waitFor(S, '✔ APPROVED  $12.00', 20_000);
    tmux.keys(S, 'Enter');
    const entry = await tmux.waitFor(S, 'Press Enter to charge.');
    expect(entry).toContain('● online');
  }, 120_000);
});
