import { createRequire } from 'node:module';

interface QrcodeTerminal {
  generate(text: string, options: { small: boolean }, done: (qr: string) => void): void;
}

const require = createRequire(import.meta.url);

/**
 * A QR code of `text` drawn with half-block characters, two modules per character row, so a
 * payment-link URL fits an 80×24 counter screen (about 17 rows). qrcode-terminal answers
 * synchronously through its callback.
 */
export function qrText(text: string): string {
  const qrcode = require('qrcode-terminal') as QrcodeTerminal;
  let out = '';
  qrcode.generate(text, { small: true }, (qr) => {
    out = qr;
  });
  return out.replace(/\n+$/, '');
}
