#!/usr/bin/env node
// Part of `npm run check:deps`: every ApiError is made by a named constructor in server/errors.ts
// (`notFound`, `conflict`, …), so a status always travels with the type Stripe gives it and a new
// refusal is one line there, not a status/type pair typed at the throw. dependency-cruiser sees
// imports, not calls; this looks for the call.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FOLDERS = ['server', 'cli', 'shared', 'agent', 'simulator'];
const ALLOWED = 'server/errors.ts';
const CALL = /\bnew\s+ApiError\s*\(/;

function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) yield path;
  }
}

const found = [];
for (const folder of FOLDERS) {
  for (const file of sources(join(ROOT, folder))) {
    const name = relative(ROOT, file).split('\\').join('/');
    if (name === ALLOWED) continue;
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (CALL.test(line)) found.push(`${name}:${i + 1}: ${line.trim()}`);
    });
  }
}
if (found.length > 0) {
  console.error(`new ApiError( outside ${ALLOWED}; add or use a constructor there:\n${found.join('\n')}`);
  process.exit(1);
}
console.log(`✔ every ApiError is made in ${ALLOWED}`);
