import { createHash } from 'node:crypto';
import { Router } from 'express';
import { type ReceiptContent, type ReceiptLine, type ReceiptInput, receiptContent } from '../../shared/receipt.js';

/**
 * Paper-like on screen (a narrow column, monospaced figures) and on paper: printing drops the
 * background and shadow and uses the page's full width, so "Print" in a browser gives a receipt.
 */
const STYLE = [
  ':root{color-scheme:light}',
  'body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f3f4f6;color:#111;margin:0;padding:1.5rem 1rem}',
  'main{max-width:24rem;margin:0 auto;background:#fff;padding:1.5rem 1.25rem;border-radius:.5rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}',
  'h1{font-size:1.25rem;margin:0;text-align:center}',
  'address{font-style:normal;text-align:center;color:#444;margin:.25rem 0 0;line-height:1.4}',
  '.notice{margin:1rem 0 0;padding:.5rem;border:2px dashed #b45309;color:#92400e;text-align:center;font-weight:700;letter-spacing:.03em}',
  'dl{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:0;padding:.9rem 0;border-top:1px dashed #999}',
  'dt{color:#555}dd{margin:0;text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}',
  '.total{font-size:1.35rem;font-weight:700;color:#111}',
  '.status{text-align:center;font-weight:700;letter-spacing:.1em;margin:.5rem 0 0;padding-top:.9rem;border-top:1px dashed #999}',
  '.footer{text-align:center;color:#555;font-size:.875rem;margin:.5rem 0 0}',
  'section:first-of-type dl{margin-top:1rem}',
  '@media print{body{background:#fff;padding:0}main{box-shadow:none;border-radius:0;max-width:none;padding:0}.notice{border-color:#000;color:#000}dt,.footer,address{color:#000}}',
].join('');
/** The one stylesheet is allowed by its hash: no 'unsafe-inline' anywhere. */
const CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function rows(lines: ReceiptLine[], label: string): string {
  if (lines.length === 0) return '';
  const items = lines
    .map((line) => {
      const cls = line.key === 'total' ? ' class="total"' : '';
      return `<dt${cls}>${escapeHtml(line.label)}</dt><dd${cls} data-key="${line.key}">${escapeHtml(line.value)}</dd>`;
    })
    .join('\n');
  return `<section aria-label="${label}"><dl>\n${items}\n</dl></section>`;
}

/** The receipt page: every line of the receipt content, nothing else. */
export function receiptPage(content: ReceiptContent): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Receipt from ${escapeHtml(content.merchant_name)}</title>
<link rel="icon" href="/favicon.ico">
<style>${STYLE}</style>
</head><body><main>
<header>
<h1>${escapeHtml(content.merchant_name)}</h1>
${content.address_lines.length > 0 ? `<address>${content.address_lines.map(escapeHtml).join('<br>')}</address>` : ''}
${content.notice ? `<p class="notice" role="note">${escapeHtml(content.notice)}</p>` : ''}
</header>
${rows(content.header, 'Payment')}
${rows(content.amounts, 'Amounts')}
${rows(content.card, 'Card')}
<p class="status">${escapeHtml(content.status)}</p>
${content.footer.map((line) => `<p class="footer">${escapeHtml(line)}</p>`).join('\n')}
</main></body></html>`;
}

/**
 * Receipt pages (`receipt_url` of paid terminal and hosted-page payments): readable without an API
 * key, found only through an unguessable token, and carrying nothing a customer could not see on paper.
 */
export function receiptsRouter(findReceipt: (token: string) => Promise<ReceiptInput | undefined>): Router {
  const router = Router();
  router.get('/:token', async (req, res) => {
    const input = await findReceipt(req.params.token);
    res.set({ 'Content-Security-Policy': CSP, 'Cache-Control': 'private, no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' });
    if (!input) {
      res.status(404).type('html').send('<!doctype html><meta charset="utf-8"><title>Receipt not found</title><p>Receipt not found.</p>');
      return;
    }
    res.type('html').send(receiptPage(receiptContent(input)));
  });
  return router;
}
