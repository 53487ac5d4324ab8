import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnAgent, type AgentProcess } from './helpers/agent.js';
import { client } from './helpers/api.js';
import { openTestDb } from './helpers/db.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * Presence end to end with a real `pos agent` process (what is killed and restarted here) against
 * a server on loopback. A 300 ms
 * heartbeat gives a 900 ms TTL (three heartbeats), so every convergence below takes about a second.
 */
const HEARTBEAT_MS = 300;
const TTL_MS = 3 * HEARTBEAT_MS;
/** Expiry runs at the deadline itself; a loaded CI machine gets this much more. */
const SLACK_MS = 1_500;

const agentDir = tempDir('pos-presence-agent-');
let server: TestServer;
let agent: AgentProcess | undefined;
let key: string;
let port: string;

type Reader = { id: string; status: string; last_seen_at: string | null; processor_terminal_id: string };
const readers = async () => (await client(server.url, key).get<{ data: Reader[] }>('/v1/terminal/readers')).body.data;
const agentArgs = () => ['--server', server.url, '--api-key', key, '--data-dir', agentDir.path, '--simulate', '2', '--heartbeat-ms', String(HEARTBEAT_MS)];

beforeAll(async () => {
  server = await startTestServer();
  key = (await server.merchant('Presence Shop')).keys.sk_test;
  port = new URL(server.url).port;
});

afterAll(async () => {
  await agent?.stop('SIGKILL');
  await server?.stop();
  agentDir.cleanup();
});

describe('reader presence from the agent', () => {
  it('registers the simulated readers once and has them online within one heartbeat', async () => {
    agent = await spawnAgent(agentArgs());
    const connected = await agent.logged('upstream connected');
    const list = await eventually(async () => {
      const rs = await readers();
      return rs.length === 2 && rs.every((r) => r.status === 'online') ? rs : undefined;
    }, 10_000);
    const firstSeen = Math.min(...list.map((r) => Date.parse(r.last_seen_at!)));
    expect(firstSeen - connected.time).toBeLessThanOrEqual(HEARTBEAT_MS + 200);
    // last_seen_at follows the heartbeats.
    const later = await eventually(async () => {
      const rs = await readers();
      return rs.every((r) => Date.parse(r.last_seen_at!) >= firstSeen + HEARTBEAT_MS) ? rs : undefined;
    }, 5_000);
    expect(later.every((r) => r.status === 'online')).toBe(true);
  });

  it('marks them offline within the TTL after the agent is SIGKILLed', async () => {
    await agent!.stop('SIGKILL');
    const killedAt = Date.now();
    await eventually(async () => ((await readers()).every((r) => r.status === 'offline') ? true : undefined), TTL_MS + SLACK_MS + 2_000);
    expect(Date.now() - killedAt).toBeLessThanOrEqual(TTL_MS + SLACK_MS + HEARTBEAT_MS);
    const db = await openTestDb(server.dataDir);
    try {
      const types = (await db.all<{ type: string }>("select type from events where type like 'terminal.reader.%' order by seq")).map((r) => r.type);
      // Registered online (the processor said so), so the first heartbeats changed nothing.
      expect(types).toEqual(['terminal.reader.offline', 'terminal.reader.offline']);
    } finally {
      await db.close();
    }
  });

  it('remembers its identity and readers across an agent restart', async () => {
    const before = await readers();
    const previousId = agent!.agentId;
    agent = await spawnAgent(agentArgs());
    expect(agent.agentId, agent.logs.join('\n')).toBe(previousId);
    await eventually(async () => ((await readers()).every((r) => r.status === 'online') ? true : undefined), 10_000);
    expect((await readers()).map((r) => r.id).sort(), agent.logs.join('\n')).toEqual(before.map((r) => r.id).sort());
    const db = await openTestDb(server.dataDir);
    try {
      const types = (await db.all<{ type: string }>("select type from events where type like 'terminal.reader.%' order by seq")).map((r) => r.type);
      expect(types.slice(2)).toEqual(['terminal.reader.online', 'terminal.reader.online']);
    } finally {
      await db.close();
    }
  });

  it('is back online after a server restart', async () => {
    server = await server.restart({ port: Number(port) });
    const restartedAt = Date.now();
    const list = await eventually(async () => {
      const rs = await readers();
      return rs.every((r) => r.status === 'online' && Date.parse(r.last_seen_at!) >= restartedAt) ? rs : undefined;
    }, 15_000);
    expect(list).toHaveLength(2);
  });

  it('says goodbye on SIGTERM: its readers go offline at once', async () => {
    expect(await agent!.stop('SIGTERM')).toBe(0);
    const list = await readers();
    expect(list.every((r) => r.status === 'offline')).toBe(true);
  });
});
