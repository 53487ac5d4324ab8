#!/usr/bin/env node
// The `pos` executable. The TypeScript sources are compiled to dist/ by `npm install` (the
// package's `prepare` script); this shim only loads the compiled entry point.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('pos: dist/ is missing; run `npm install` (or `npm run build`) in the repository first\n');
  process.exit(2);
}
const { main } = await import(entry.href);
await main(process.argv);
