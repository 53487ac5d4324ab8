import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { client, type Json } from './helpers/api.js';
import { adminMerchant, spawnedServers } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

const { dataDir, serverOn } = spawnedServers();

/** The processes `pid` started, as the kernel lists them. */
function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
    readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function cardPayment(url: string, key: string): Promise<{ status: number; body: { data?: { status?: string } } }> {
  return client(url, key).post<{ data?: { status?: string } }>('/v1/transactions', { amount: 1250, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
}

// The kernel's list of a process's children is Linux's; elsewhere the simulator's process is not found.
const linux = existsSync('/proc/self/task');

describe.runIf(linux)("pos server's embedded simulator in a process of its own", () => {
  it('takes card payments through a simulator that is a child process of the server, and stops it, lock released, when the server stops', async () => {
    const dir = dataDir();
    const server = await serverOn(dir);
    const shop = await adminMerchant(dir, 'Two Core Café');
    const paid = await cardPayment(server.url, shop.api_keys.sk_test);
    expect(paid.status).toBe(201);
    expect(paid.body.data?.status).toBe('succeeded');

    const children = childrenOf(server.child.pid!);
    expect(children).toHaveLength(1);
    const simulator = children[0]!;
    const lock = join(dir, 'simulator', 'simulator.pid');
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(simulator));
    const merchant = await client(server.url, shop.api_keys.sk_test).get<{ data: { processor: { api_base: string } } }>('/v1/merchant');
    expect((await fetch(`${merchant.body.data.processor.api_base}/_sim/rate_limits`)).status).toBe(200);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(alive(simulator)).toBe(false);
    expect(existsSync(lock)).toBe(false);
    expect(server.logs.join('\n')).toContain('pos server stopped');
  });

  it('logs a simulator that dies, restarts it where the server reaches it, and takes payments again', async () => {
    const dir = dataDir();
    const server = await serverOn(dir);
    const shop = await adminMerchant(dir, 'Crash Café');
    expect((await cardPayment(server.url, shop.api_keys.sk_test)).status).toBe(201);
    const [first] = childrenOf(server.child.pid!);
    process.kill(first!, 'SIGKILL');

    const logged = (msg: string) => server.logs.some((line) => line.includes(`"msg":"${msg}"`));
    await eventually(() => (logged('the embedded simulator exited unexpectedly: processor calls fail until it is restarted') ? true : undefined));
    await eventually(() => (logged('the embedded simulator restarted') ? true : undefined));
    const [second] = childrenOf(server.child.pid!);
    expect(second).toBeDefined();
    expect(second).not.toBe(first);

    const again = await cardPayment(server.url, shop.api_keys.sk_test);
    expect(again.status).toBe(201);
    expect(again.body.data?.status).toBe('succeeded');
    await eventually(async () => ((await client(server.url).get<Json>('/readyz')).status === 200 ? true : undefined));

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(alive(second!)).toBe(false);
  });
});
