import { createHash } from 'node:crypto';
import { Router } from 'express';
import { formatAmount } from '../../shared/money.js';
import type { Receipt } from '../payments/receipts.js';

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:26rem;margin:2rem auto;padding:0 1rem;color:#111}dl{display:grid;grid-template-columns:auto 1fr;gap:.4rem 1rem}dt{color:#555}dd{margin:0;text-align:right}.total{font-size:1.4rem;font-weight:600}';
/** The one stylesheet is allowed by its hash: no 'unsafe-inline' anywhere. */
const CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * `simulated`: the processor is the simulator, so even a live receipt records no real payment.
 *
 * Receipt pages (`receipt_url` of completed terminal payments): readable without an API key, found
 * only through an unguessable token, and carrying nothing a customer could not see on paper.
 */
export function receiptsRouter(findReceipt: (token: string) => Promise<Receipt | undefined>, simulated: boolean): Router {
  const router = Router();
  router.get('/:token', async (req, res) => {
    const token = req.params.token;
    const row = await findReceipt(token);
    res.set({ 'Content-Security-Policy': CSP, 'Cache-Control': 'private, no-store', 'Referrer-Policy': 'no-referrer' });
    if (!row) {
      res.status(404).type('html').send('<!doctype html><meta charset="utf-8"><title>Receipt not found</title><p>Receipt not found.</p>');
      return;
    }
    const amount = row.amount;
    const tip = row.tip_amount;
    const money = (n: number) => escapeHtml(formatAmount(n, row.currency));
    const when = row.captured_at === null ? '' : new Date(row.captured_at).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
    res.type('html').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Receipt from ${escapeHtml(row.business_name)}</title>
<style>${STYLE}</style>
</head><body>
<h1>${escapeHtml(row.business_name)}</h1>
${row.mode === 'test' ? '<p><strong>Test payment: no money moved.</strong></p>' : simulated ? '<p><strong>Simulated payment: no money moved.</strong></p>' : ''}
<dl>
<dt>Amount</dt><dd>${money(amount - tip)}</dd>
<dt>Tip</dt><dd>${money(tip)}</dd>
<dt class="total">Total</dt><dd class="total">${money(amount)}</dd>
${row.amount_refunded > 0 ? `<dt>Refunded</dt><dd>${money(row.amount_refunded)}</dd>` : ''}
<dt>Card</dt><dd>${escapeHtml((row.card_brand ?? 'card').toUpperCase())} •••• ${escapeHtml(row.card_last_four ?? '')}</dd>
<dt>Time</dt><dd>${escapeHtml(when)}</dd>
<dt>Reference</dt><dd>${escapeHtml(row.reference)}</dd>
</dl>
</body></html>`);
  });
  return router;
}
