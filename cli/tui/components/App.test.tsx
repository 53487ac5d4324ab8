import { writeFileSync } from 'node:fs';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { ApiRequestError } from '../../../shared/api/errors.js';
import { frameWith } from '../../../test/helpers/ink.js';
import { eventually } from '../../../test/helpers/tmp.js';
import { PosClient } from '../../api.js';
import { FakeSource, reader, txn, paying } from '../fixtures.js';
import { App } from './App.js';

const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));
function frameWithout(ui: { lastFrame(): string | undefined }, text: string): Promise<string> {
  return eventually(
    () => {
      const f = ui.lastFrame() ?? '';
      if (!f.includes(text)) return f;
      throw new Error(`frame kept showing "${text}":\n${f}`);
    },
    3000,
    10,
  );
}
/** An API client nothing reaches: the App only uses it for links, refunds and the day report. */
const api = new PosClient({ server: 'http://127.0.0.1:9', apiKey: 'sk_test_x', fetch: () => Promise.reject(new Error('offline')) });

/** With POS_WRITE_SCREENS=1, views the end-to-end test cannot reach are written to docs/screens/ too. */
function save(name: string, frame: string): void {
  if (process.env.POS_WRITE_SCREENS) writeFileSync(new URL(`../../../docs/screens/${name}.txt`, import.meta.url), `${frame.trimEnd()}\n`);
}

async function ready(client: PosClient = api, props: { quitWarning?: string; intro?: string[] } = {}) {
  const source = new FakeSource();
  const ui = render(<App source={source} api={client} color={false} {...props} />);
  await tick();
  source.emit({ type: 'merchant', name: 'Demo Shop', mode: 'test', currency: 'usd' });
  source.emit({ type: 'connection', status: 'connected' });
  source.emit({ type: 'readers', readers: [reader()] });
  if (!props.intro) await frameWith(ui, 'Amount  _  USD  Enter alone asks to charge 10.00');
  return { source, ui };
}

describe('App', () => {
  it('charges with Enter, taps with s, and shows the approval', async () => {
    const { source, ui } = await ready();
    ui.stdin.write('\ry');
    await frameWith(ui, 'WAITING FOR CARD on Till 1: $10.00');
    expect(source.calls).toContain('start Till 1 1000 usd');
    ui.stdin.write('s');
    await frameWith(ui, 'Simulated tap sent');
    expect(ui.lastFrame()).not.toContain('Card read');
    expect(source.calls).toContain('tap Till 1');
    source.emit({ type: 'reader', reader: reader({ activity: 'processing', payment: paying('t-1') }) });
    await frameWith(ui, 'PROCESSING $10.00');
    source.emit({ type: 'transaction', transaction: txn({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' }) });
    await frameWith(ui, '✔ APPROVED  $10.00');
    ui.unmount();
  });

  it('takes cash: $ on the amount, the cash handed over, the change due; o opens the drawer for no sale', async () => {
    const { source, ui } = await ready();
    ui.stdin.write('12.75');
    await frameWith(ui, 'Amount  12.75_');
    ui.stdin.write('$');
    await frameWith(ui, 'CASH SALE  $12.75 due');
    ui.stdin.write('10');
    ui.stdin.write('\r');
    await frameWith(ui, '$10.00 is less than the $12.75 due.');
    ui.stdin.write('\u007f\u007f20');
    ui.stdin.write('\r');
    const done = await frameWith(ui, 'CHANGE DUE        $7.25');
    expect(done).toContain('Drawer opened.');
    expect(done).toContain('Receipt printing.');
    expect(source.calls).toContain('cash 1275 2000 usd');
    ui.stdin.write('\r');
    await frameWith(ui, 'Amount  _');
    ui.stdin.write('o');
    await frameWith(ui, 'Drawer opened (no sale).');
    expect(source.calls).toContain('drawer no_sale');
    ui.unmount();
  });

  it('explains the 409 when the customer already tapped', async () => {
    const { source, ui } = await ready();
    source.answers.cancelPayment = () => Promise.reject(new ApiRequestError(409, { type: 'invalid_request_error', code: 'authorization_in_progress', message: 'x' }));
    ui.stdin.write('\ry');
    await frameWith(ui, 'WAITING FOR CARD');
    ui.stdin.write('x');
    await frameWith(ui, 'Customer already tapped: wait for the result.');
    expect(source.calls).toContain('cancel t-1 canceled_by_staff');
    ui.unmount();
  });

  it('keeps working through a lost connection', async () => {
    const { source, ui } = await ready();
    source.emit({ type: 'connection', status: 'lost', error: 'cannot reach http://127.0.0.1:4242 (is `pos server` or `pos up` running?)' });
    save('connection-lost', await frameWith(ui, 'CONNECTION LOST'));
    source.emit({ type: 'connection', status: 'connected' });
    await frameWith(ui, '● connected');
    ui.unmount();
  });

  it('handles a burst of keys in order: "12" and Enter at once charges 12.00', async () => {
    const { source, ui } = await ready();
    ui.stdin.write('12\r');
    await frameWith(ui, 'WAITING FOR CARD on Till 1: $12.00');
    expect(source.calls).toContain('start Till 1 1200 usd');
    ui.unmount();
  });

  it('takes 7,50 as 7.50, and clears the field with Esc', async () => {
    const { source, ui } = await ready();
    ui.stdin.write('99');
    await frameWith(ui, 'Amount  99_');
    ui.stdin.write('\u001b');
    await frameWith(ui, 'Amount  _');
    ui.stdin.write('7,50\r');
    await frameWith(ui, 'WAITING FOR CARD on Till 1: $7.50');
    expect(source.calls).toContain('start Till 1 750 usd');
    ui.unmount();
  });

  it('refuses 0.49 at once with the minimum in money, sending nothing', async () => {
    const { source, ui } = await ready();
    ui.stdin.write('0.49\r');
    await frameWith(ui, 'Minimum charge is $0.50');
    expect(source.calls.some((c) => c.startsWith('start'))).toBe(false);
    ui.unmount();
  });

  it('does not quit on a q typed into the amount, and asks before stopping the server', async () => {
    const { ui } = await ready(api, { quitWarning: 'the server and the agent' });
    ui.stdin.write('12q');
    await frameWith(ui, '"q" is not part of an amount');
    ui.stdin.write('\u0015');
    await frameWith(ui, 'Amount  _');
    ui.stdin.write('q');
    await frameWith(ui, 'Quit? This stops the server and the agent. y quits, any other key stays.');
    ui.stdin.write('n');
    expect(await frameWithout(ui, 'Quit?')).toContain('Press Enter to charge.');
    ui.unmount();
  });

  it('shows the first run’s keys on a screen of their own until a key is pressed', async () => {
    const { ui } = await ready(api, { intro: ['Demo merchant "Demo Shop" created.', '  sk_test  sk_test_abc'] });
    await frameWith(ui, 'sk_test_abc');
    expect(ui.lastFrame()).toContain('Press any key to open the counter');
    ui.stdin.write(' ');
    await frameWith(ui, 'Amount  _');
    expect(ui.lastFrame()).not.toContain('sk_test_abc');
    ui.unmount();
  });

  it('picks up a payment already on the reader and cancels it with x', async () => {
    const { source, ui } = await ready();
    source.emit({ type: 'reader', reader: reader({ activity: 'waiting_for_card', payment: paying('t-5', 1000) }) });
    await frameWith(ui, 'already on the reader');
    ui.stdin.write('x');
    await tick();
    expect(source.calls).toContain('cancel t-5 canceled_by_staff');
    ui.unmount();
  });

  it('refuses an ambiguous amount with a message', async () => {
    const { ui } = await ready();
    ui.stdin.write('47.505');
    await frameWith(ui, 'Amount  47.505_');
    ui.stdin.write('\r');
    await frameWith(ui, 'more than 2 decimals');
    ui.unmount();
  });

  it('offers a payment link for the same amount when the reader is offline', async () => {
    const requests: { method: string; url: string; body: unknown }[] = [];
    const linkApi = new PosClient({
      server: 'http://127.0.0.1:4242',
      apiKey: 'sk_test_x',
      fetch: async (url, init) => {
        requests.push({ method: String(init?.method), url: String(url), body: JSON.parse(String(init?.body ?? 'null')) });
        return new Response(JSON.stringify({ data: { id: 'l-1', reference: 'pl_7Hq2', url: 'http://127.0.0.1:4242/pay/pl_7Hq2', amount: 1000, currency: 'USD', status: 'open' } }), { status: 201 });
      },
    });
    const { source, ui } = await ready(linkApi);
    source.emit({ type: 'readers', readers: [reader({ status: 'offline' })] });
    await frameWith(ui, '○ offline');
    ui.stdin.write('\ry');
    save('charge-offline', await frameWith(ui, 'Press l to take $10.00 by payment link instead'));
    expect(source.calls.some((c) => c.startsWith('start'))).toBe(false);
    ui.stdin.write('l');
    const f = await frameWith(ui, 'http://127.0.0.1:4242/pay/pl_7Hq2');
    expect(f).toContain('Payment link for $10.00 (pl_7Hq2)');
    expect(requests[0]).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:4242/v1/payment-links', body: { amount: 1000, currency: 'usd' } });
    save('charge-payment-link', f);
    ui.unmount();
  });

  it('does not start a payment on Enter alone: it asks, and only y charges', async () => {
    const { source, ui } = await ready();
    ui.stdin.write('\r');
    await frameWith(ui, 'Charge $10.00 again? y/n');
    ui.stdin.write('\r');
    await frameWithout(ui, 'again? y/n');
    await tick(100);
    expect(source.calls.some((c) => c.startsWith('start'))).toBe(false);
    ui.unmount();
  });

  it('keeps the keys typed while the payment is being sent: "12.50 Enter s" taps once it waits', async () => {
    const { source, ui } = await ready();
    let send!: () => void;
    source.answers.startPayment = () => new Promise((resolve) => (send = () => resolve({ transactionId: 't-1' })));
    ui.stdin.write('12.50\rs');
    await frameWith(ui, 'Sending $12.50 to Till 1');
    expect(source.calls.filter((c) => c.startsWith('tap'))).toEqual([]);
    send();
    await frameWith(ui, 'Simulated tap sent');
    expect(source.calls.filter((c) => c.startsWith('start'))).toEqual(['start Till 1 1250 usd']);
    expect(source.calls.filter((c) => c.startsWith('tap'))).toEqual(['tap Till 1']);
    ui.unmount();
  });

  it('sends the same payment to the reader again after the customer cancels on it', async () => {
    const { source, ui } = await ready();
    ui.stdin.write('\ry');
    await frameWith(ui, 'WAITING FOR CARD');
    source.emit({ type: 'reader', reader: reader({ activity: 'canceled_on_reader', payment: paying('t-1') }) });
    await frameWith(ui, 'press a to send it to the reader again');
    ui.stdin.write('a');
    await frameWith(ui, 'WAITING FOR CARD on Till 1: $10.00');
    expect(source.calls).toContain('resend t-1 Till 1');
    expect(source.calls.filter((c) => c.startsWith('start'))).toHaveLength(1);
    ui.unmount();
  });

  it('takes the payment by link when the processor refuses the reader as offline', async () => {
    const { source, ui } = await ready();
    source.answers.startPayment = () => Promise.reject(new ApiRequestError(409, { type: 'invalid_request_error', code: 'reader_offline', message: 'The reader is offline' }));
    ui.stdin.write('12\r');
    await frameWith(ui, 'Press l to take $12.00 by payment link instead');
    ui.unmount();
  });

  it('says when the approval’s receipt did not print, in words, and R prints it again', async () => {
    const { source, ui } = await ready();
    source.emit({
      type: 'devices',
      devices: [{ id: 'printer', kind: 'receipt_printer', target: '/dev/ttyUSB0', status: 'offline', last_seen_at: null, last_error: 'Printer offline: check the cable', paper: null, cover_open: null, drawer_open: null, queued: 1 }],
    });
    ui.stdin.write('\ry');
    await frameWith(ui, 'WAITING FOR CARD');
    source.emit({ type: 'transaction', transaction: txn({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' }) });
    const f = await frameWith(ui, 'Receipt not printed: Printer offline: check the cable');
    expect(f).toContain('R prints it again');
    ui.stdin.write('R');
    await frameWith(ui, 'Receipt sent to the printer.');
    expect(source.calls).toContain('print t-1 customer');
    ui.unmount();
  });
});
