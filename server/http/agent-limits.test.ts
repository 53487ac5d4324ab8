import { describe, expect, it } from 'vitest';
import { RATE_LIMIT_COOL_OFF_MS } from '../../shared/agent-upstream.js';
import { AgentInbox, KeyGate, Lanes, MESSAGE_BURST, MAX_REFUSED, MESSAGES_PER_SECOND, TokenBucket, messageBucket, type InboxBounds } from './agent-limits.js';

describe('a connection’s message rate', () => {
  it('takes a burst at once, refuses after it, and closes once the refusals pass their bound', () => {
    const bucket = messageBucket(0);
    const takes = Array.from({ length: MESSAGE_BURST + MAX_REFUSED + 1 }, () => bucket.take(0));
    expect(takes.slice(0, MESSAGE_BURST).every((t) => t === 'accepted')).toBe(true);
    expect(takes.slice(MESSAGE_BURST, MESSAGE_BURST + MAX_REFUSED).every((t) => t === 'refused')).toBe(true);
    expect(takes.at(-1)).toBe('exhausted');
  });

  it('refills at its rate, and a sender within it is never refused', () => {
    const bucket = messageBucket(0);
    for (let i = 0; i < MESSAGE_BURST; i++) expect(bucket.take(0)).toBe('accepted');
    expect(bucket.take(0)).toBe('refused');
    // The refused message is a debt: one token's worth of time pays it, the next one's buys a message.
    expect(bucket.take(1000 / MESSAGES_PER_SECOND)).toBe('refused');
    expect(bucket.take((3 * 1000) / MESSAGES_PER_SECOND)).toBe('accepted');
    // Ten seconds at the rate, one message per token's worth of time: all accepted.
    const fresh = messageBucket(0);
    for (let ms = 0; ms < 10_000; ms += 1000 / MESSAGES_PER_SECOND) expect(fresh.take(ms)).toBe('accepted');
  });

  it('refills nothing when the clock steps back, and never past its burst', () => {
    const bucket = new TokenBucket(1, 2, 0, 10_000);
    expect(bucket.take(10_000)).toBe('accepted');
    expect(bucket.take(10_000)).toBe('accepted');
    expect(bucket.take(5_000)).toBe('exhausted');
    expect(bucket.full(1_000_000)).toBe(true);
  });
});

const bounds: InboxBounds = { pauseAtMessages: 4, pauseAtBytes: 1_000, maxMessages: 8, maxBytes: 2_000 };

function inbox(handle: (n: number) => Promise<void>, now = () => 0) {
  const flow: string[] = [];
  const box = new AgentInbox<number>(handle, { pause: () => flow.push('pause'), resume: () => flow.push('resume') }, now, bounds);
  return { box, flow };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 1_000 && !check(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(check()).toBe(true);
};

describe('a connection’s inbox', () => {
  it('handles messages one at a time in order, giving the event loop a turn between two', async () => {
    const seen: string[] = [];
    let running = 0;
    const { box } = inbox(async (n) => {
      running += 1;
      expect(running).toBe(1);
      seen.push(`start ${n}`);
      // Work that answers without I/O, as better-sqlite3 does.
      await Promise.resolve();
      seen.push(`end ${n}`);
      running -= 1;
      setImmediate(() => seen.push(`turn after ${n}`));
    });
    for (const n of [1, 2, 3]) expect(box.push(n, 10)).toBe(true);
    await until(() => !box.busy);
    expect(seen.slice(0, 4)).toEqual(['start 1', 'end 1', 'turn after 1', 'start 2']);
    expect(seen.filter((s) => s.startsWith('start'))).toEqual(['start 1', 'start 2', 'start 3']);
  });

  it('stops the socket reading at its pause point, reads again at half, and refuses to grow past its bound', async () => {
    const release: (() => void)[] = [];
    const { box, flow } = inbox(() => new Promise<void>((r) => release.push(r)));
    for (let n = 1; n <= 3; n++) box.push(n, 10);
    expect(flow).toEqual([]);
    box.push(4, 10);
    expect(flow).toEqual(['pause']);
    for (let n = 5; n <= 8; n++) expect(box.push(n, 10)).toBe(true);
    expect(box.push(9, 10)).toBe(false);
    expect(box.size).toBe(8);
    // Each handled message lets the next start; at half the pause point the socket reads again.
    for (let i = 0; i < 6; i++) {
      await until(() => release.length > i);
      release[i]!();
    }
    await until(() => flow.length === 2);
    expect(flow).toEqual(['pause', 'resume']);
    expect(box.size).toBeLessThanOrEqual(bounds.pauseAtMessages / 2);
  });

  it('counts bytes too: a few large messages pause it and the byte bound refuses more', () => {
    const { box, flow } = inbox(() => new Promise<void>(() => undefined));
    expect(box.push(1, 600)).toBe(true);
    expect(box.push(2, 600)).toBe(true);
    expect(flow).toEqual(['pause']);
    expect(box.push(3, 900)).toBe(false);
  });

  it('is busy while a message waits or runs, and dates its last handled message by the clock', async () => {
    let now = 100;
    let release: () => void = () => undefined;
    const { box } = inbox(() => new Promise<void>((r) => (release = r)), () => now);
    expect(box.busy).toBe(false);
    expect(box.lastHandledAt).toBe(100);
    box.push(1, 1);
    now = 500;
    expect(box.busy).toBe(true);
    expect(box.lastHandledAt).toBe(100);
    release();
    await until(() => !box.busy);
    expect(box.lastHandledAt).toBe(500);
    now = 700;
    box.touch();
    expect(box.lastHandledAt).toBe(700);
  });

  it('drops what waits when closed and reads again if it had stopped', async () => {
    const handled: number[] = [];
    let release: () => void = () => undefined;
    const { box, flow } = inbox((n) => {
      handled.push(n);
      return new Promise<void>((r) => (release = r));
    });
    for (let n = 1; n <= 5; n++) box.push(n, 1);
    box.close();
    expect(flow).toEqual(['pause', 'resume']);
    release();
    await until(() => !box.busy);
    expect(handled).toEqual([1]);
  });
});

describe('a key’s connections', () => {
  it('caps open connections per key, counting each until released', () => {
    const gate = new KeyGate(2, 100, 1);
    for (let i = 0; i < 2; i++) {
      expect(gate.admit('k1', 0).ok).toBe(true);
      gate.opened('k1');
    }
    const refused = gate.admit('k1', 0);
    expect(refused).toMatchObject({ ok: false, reason: expect.stringMatching(/2 agent connections/) });
    expect(gate.admit('k2', 0).ok).toBe(true);
    gate.release('k1');
    expect(gate.admit('k1', 0).ok).toBe(true);
  });

  it('limits how fast a key connects', () => {
    const gate = new KeyGate(1_000, 3, 1);
    for (let i = 0; i < 3; i++) expect(gate.admit('k', 0).ok).toBe(true);
    expect(gate.admit('k', 0)).toMatchObject({ ok: false, reason: expect.stringMatching(/connection attempts/) });
    expect(gate.admit('k', 1_000).ok).toBe(true);
  });

  it('refuses a key for the cool-off after one of its connections was closed for flooding', () => {
    const gate = new KeyGate();
    gate.coolOff('k', 0);
    expect(gate.admit('k', 0).ok).toBe(true);
    gate.coolOff('k', 1_000);
    expect(gate.admit('k', 1_000 + RATE_LIMIT_COOL_OFF_MS - 1)).toMatchObject({ ok: false, retryAfterSeconds: 1 });
    expect(gate.admit('k', 1_000 + RATE_LIMIT_COOL_OFF_MS).ok).toBe(true);
  });

  it('forgets keys with nothing left to remember', () => {
    const gate = new KeyGate(10, 5, 1);
    gate.admit('idle', 0);
    gate.admit('open', 0);
    gate.opened('open');
    gate.sweep(500);
    expect(gate.size).toBe(2);
    gate.sweep(1_000);
    expect(gate.size).toBe(1);
  });
});

describe('a merchant’s lane', () => {
  it('runs one merchant’s work one piece at a time, in order, beside other merchants’ work, and forgets idle lanes', async () => {
    const lanes = new Lanes();
    const log: string[] = [];
    const releases = new Map<string, () => void>();
    const piece = (lane: string, name: string) =>
      lanes.run(lane, async () => {
        log.push(`start ${name}`);
        await new Promise<void>((r) => releases.set(name, r));
        log.push(`end ${name}`);
        return name;
      });
    const a1 = piece('a', 'a1');
    const a2 = piece('a', 'a2');
    const b1 = piece('b', 'b1');
    await until(() => log.length === 2);
    expect(log).toEqual(['start a1', 'start b1']);
    releases.get('b1')!();
    expect(await b1).toBe('b1');
    releases.get('a1')!();
    await until(() => releases.has('a2'));
    expect(log).toEqual(['start a1', 'start b1', 'end b1', 'end a1', 'start a2']);
    releases.get('a2')!();
    await a1;
    await a2;
    // A failure settles its own caller and does not stop the lane.
    await expect(lanes.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lanes.run('a', async () => 'after')).toBe('after');
    await until(() => lanes.size === 0);
  });
});
