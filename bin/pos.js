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
// Past this import, cli/main.ts turns every failure into one line; a build too broken to load is
// reported the same way, the stack being of no use to whoever runs the command.
const loaded = await import(entry.href).catch((err) => {
  process.stderr.write(`pos: cannot load dist/cli/main.js (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); run \`npm run build\`\n`);
  process.exit(2);
});
await loaded.main(process.argv);
