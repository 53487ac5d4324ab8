import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { client } from './helpers/api.js';
import { json, POS_BIN, runCli } from './helpers/cli.js';
import { eventually, tempDir } from './helpers/tmp.js';

const dir = tempDir('pos-up-');
const env = { POS_CONFIG_DIR: join(dir.path, 'config') };
afterAll(() => dir.cleanup());
// A failed assertion must not leave a `pos up` serving after the run: every one started is killed here.
const running = new Set<ReturnType<typeof spawn>>();
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
});

/** `pos up` without a terminal: serves and logs JSON until SIGTERM. Resolves with its URL and stdout. */
async function up(): Promise<{ url: string; stdout: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [POS_BIN, 'up', '--port', '0', '--data-dir', join(dir.path, 'data')], {
    env: { PATH: process.env.PATH ?? '', HOME: dir.path, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pos up did not get ready:\n${out}`)), 20_000);
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const ready = /\{[^\n]*"msg":"pos up ready"[^\n]*\}/.exec(out);
      if (ready) {
        clearTimeout(timer);
        resolve((JSON.parse(ready[0]) as { url: string }).url);
      }
    });
    void exited.then((code) => reject(new Error(`pos up exited with ${code}:\n${out}`)));
  });
  return {
    url,
    stdout: () => out,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('pos up without a terminal', () => {
  it('creates the demo shop once, saves its key to the profile, and serves until SIGTERM', async () => {
    const first = await up();
    expect(first.stdout()).toMatch(/Demo merchant "Demo Shop" created/);
    expect(first.stdout()).toMatch(/sk_test +sk_test_\w+/);
    const profile = JSON.parse(readFileSync(join(env.POS_CONFIG_DIR, 'config.json'), 'utf8')) as { profiles: { default: { server: string; api_key: string; counter_key: string } } };
    expect(profile.profiles.default).toMatchObject({ server: first.url, api_key: expect.stringMatching(/^sk_test_/), counter_key: expect.stringMatching(/^rk_test_/) });
    // The agent and the counter run on the restricted counter key, printed with the others.
    expect(first.stdout()).toContain(`counter  ${profile.profiles.default.counter_key}`);

    const readers = await runCli(['readers', 'list', '--json'], { env });
    expect(readers.status, readers.stderr).toBe(0);
    expect(json<{ data: unknown[] }>(readers).data).toEqual([expect.objectContaining({ name: 'Till 1', status: 'online' })]);
    const run = runCli(['pay', '10', '--reader', 'Till 1', '--wait', '--json'], { env });
    // The payment reaches the reader within a second or two; tapping early is answered with an error, so retry.
    await eventually(async () => ((await runCli(['simulate', 'tap', 'Till 1'], { env })).status === 0 ? true : undefined), 20_000);
    expect(json<{ data: { status: string } }>(await run).data.status).toBe('succeeded');
    expect(await first.stop()).toBe(0);

    const second = await up();
    expect(second.stdout()).not.toMatch(/Demo merchant/);
    const again = JSON.parse(readFileSync(join(env.POS_CONFIG_DIR, 'config.json'), 'utf8')) as { profiles: { default: { api_key: string; counter_key: string } } };
    expect(again.profiles.default.api_key).toBe(profile.profiles.default.api_key);
    expect(again.profiles.default.counter_key).toBe(profile.profiles.default.counter_key);
    const keys = (await client(second.url, again.profiles.default.api_key).get<{ data: { type: string; name: string | null }[] }>('/v1/api-keys')).body.data;
    expect(keys.filter((k) => k.type === 'restricted').map((k) => k.name)).toEqual(['pos up counter']);
    expect(json<{ data: unknown[] }>(await runCli(['readers', 'list', '--json'], { env })).data).toHaveLength(1);
    expect(await second.stop()).toBe(0);
    // Two start-ups of the whole stack and six CLI processes: over the suite's 30 s on a loaded machine.
  }, 60_000);
});
