import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReaderState } from '../shared/agent-protocol.js';
import { systemClock } from '../shared/time.js';
import { PosApi } from '../shared/api/client.js';
import { SerialDriver } from '../agent/drivers/serial.js';
import { LineSplitter } from '../agent/drivers/line-protocol.js';
import { nodeSerialBinding, type SerialConnection } from '../agent/ports.js';
import { ReaderBook } from '../agent/readers.js';
import { AgentState } from '../agent/state.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { haveSocat } from './helpers/tools.js';

/**
 * The serial driver against a pseudo-terminal pair (socat): the driver opens one end as it would
 * a USB reader, the test plays the reader on the other end. Killing socat is unplugging it.
 */
const socatAvailable = haveSocat();

const dir = tempDir('pos-serial-');
const agentEnd = join(dir.path, 'reader');
const deviceEnd = join(dir.path, 'device');
let socat: ChildProcess | undefined;

async function plug(): Promise<void> {
  socat = spawn('socat', [`pty,raw,echo=0,link=${agentEnd}`, `pty,raw,echo=0,link=${deviceEnd}`], { stdio: 'ignore' });
  await eventually(() => (existsSync(agentEnd) && existsSync(deviceEnd) ? true : undefined), 5_000);
}

async function unplug(): Promise<void> {
  const s = socat;
  socat = undefined;
  if (!s) return;
  const exited = new Promise((r) => s.once('exit', r));
  s.kill('SIGTERM');
  await exited;
}

/** The test's side: a reader that answers IDENTIFY and PING, and says what it is told to. */
async function playReader(serial: string): Promise<{ conn: SerialConnection; heard: string[]; say(line: string): void }> {
  const conn = await nodeSerialBinding.open(deviceEnd, 9600);
  const heard: string[] = [];
  const lines = new LineSplitter();
  conn.onData((chunk) => {
    for (const line of lines.push(chunk.toString('latin1'))) {
      heard.push(line);
      if (line === 'IDENTIFY') conn.write(`HELLO model=acme-p1 serial=${serial}\n`);
      if (line === 'PING') conn.write('PONG\n');
    }
  });
  return { conn, heard, say: (line) => conn.write(`${line}\n`) };
}

const changes: ReaderState[] = [];

/**
 * The driver notices a plug or an unplug within 2 s by design (ports polled every 500 ms, silence
 * taken as offline after 1.8 s; docs/serial-readers.md). Tests wait longer than that so a loaded
 * CI machine does not turn a scheduling delay into a failure: timing is for benchmarks.
 */
const DETECT_DEADLINE_MS = 6_000;
let book: ReaderBook;
let driver: SerialDriver;
let state: AgentState;

beforeAll(async () => {
  if (!socatAvailable) return;
  state = await AgentState.open(join(dir.path, 'agent'));
  book = new ReaderBook(systemClock, { reader: (r) => changes.push(r), readers: () => undefined });
  const ctx = { book, api: new PosApi({ server: 'http://127.0.0.1:9', apiKey: 'sk_test_x' }), state, logger: pino({ level: 'silent' }), serial: nodeSerialBinding };
  driver = new SerialDriver(ctx, [{ path: agentEnd }], 9600);
  await driver.start();
});

afterAll(async () => {
  await driver?.stop();
  await unplug();
  dir.cleanup();
});

describe.skipIf(!socatAvailable)('serial readers on a pty pair', () => {
  it('notices a plugged reader within 2 s, identifies it and follows its states', async () => {
    await plug();
    const reader = await playReader('SN-0001');
    await eventually(() => (book.get('serial:SN-0001')?.status === 'online' ? true : undefined), DETECT_DEADLINE_MS);
    expect(book.get('serial:SN-0001')).toMatchObject({ name: 'acme-p1 (SN-0001)', activity: 'idle' });

    driver.paymentStarted('serial:SN-0001', { transaction_id: 'txn-1', amount: 1250, currency: 'usd' });
    await eventually(() => (reader.heard.includes('PAY txn=txn-1 amount=1250 currency=usd') ? true : undefined), DETECT_DEADLINE_MS);
    const from = changes.length;
    for (const line of ['STATE waiting_for_card', 'garbage that is not the protocol', 'CARD brand=visa last4=4242', 'STATE processing', 'RESULT approved']) reader.say(line);
    await eventually(() => (book.get('serial:SN-0001')?.activity === 'approved' ? true : undefined), DETECT_DEADLINE_MS);
    expect(changes.slice(from).map((c) => c.activity)).toEqual(['waiting_for_card', 'processing', 'approved']);
    expect(book.get('serial:SN-0001')).toMatchObject({ transaction_id: 'txn-1', amount: null });
    // Pings keep it online.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(book.get('serial:SN-0001')?.status).toBe('online');
    expect(reader.heard.filter((l) => l === 'PING').length).toBeGreaterThanOrEqual(2);
    await reader.conn.close();
  });

  it('notices the unplug within 2 s and the plug-in again', async () => {
    await unplug();
    await eventually(() => (book.get('serial:SN-0001')?.status === 'offline' ? true : undefined), DETECT_DEADLINE_MS);

    await plug();
    const reader = await playReader('SN-0001');
    await eventually(() => (book.get('serial:SN-0001')?.status === 'online' ? true : undefined), DETECT_DEADLINE_MS);
    reader.say('STATE waiting_for_card');
    reader.say('RESULT canceled');
    await eventually(() => (book.get('serial:SN-0001')?.activity === 'canceled_on_reader' ? true : undefined), DETECT_DEADLINE_MS);
    await reader.conn.close();
  });

  it('takes a reader that stops answering offline', async () => {
    // The device end stays open but silent: no PONG comes back.
    const silent = await nodeSerialBinding.open(deviceEnd, 9600);
    await eventually(() => (book.get('serial:SN-0001')?.status === 'offline' ? true : undefined), 3_000);
    await silent.close();
  });
});
