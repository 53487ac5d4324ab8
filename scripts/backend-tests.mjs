#!/usr/bin/env node
// Which test files depend on the database backend, for the PostgreSQL pass of `npm test`
// (scripts/test-postgres.mjs). A file does when what it loads reaches a module that reads
// process.env.POS_TEST_DATABASE_URL: test/helpers/db.ts, behind startTestServer, spawnServer, openDomain,
// openTestDb and the data-dir runs of `pos`. Derived from the imports rather than listed by hand,
// so a new test on the store is on both passes without anyone remembering to say so, and a
// simulator, CLI-parsing or TUI test runs once.
//
// A file that opens the store only to stand something up, while what it asserts is a process, a
// terminal, a browser or a device (tmux, chromium, ptys, pipes), says so in a comment,
// `@backend-once <why>`, and runs once: the storage its scenario touches is asserted by other files
// on both backends, and running it again cost the PostgreSQL pass minutes for nothing.
//
// `node scripts/backend-tests.mjs [ROOT]` prints the backend files, one a line; `--once` the others.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The folders vitest.config.ts includes tests from. */
const TEST_FOLDERS = ['cli', 'server', 'shared', 'agent', 'simulator', 'test'];
const TEST_FILE = /\.test\.tsx?$/;
/** Reading the variable, not naming it: a comment or a message about it is no dependency. */
const MARKER = /process\.env(?:\.POS_TEST_DATABASE_URL\b|\[['"]POS_TEST_DATABASE_URL['"]\])/;
/** A test file's own declaration that its assertions do not depend on the backend, and why. */
const ONCE = /@backend-once\s+(\S[^\n]*)/;

/**
 * Relative specifiers a module loads: static imports and re-exports, side-effect imports and
 * import(); `import type` and `export type` load nothing and are skipped.
 */
const SPECIFIERS = [/\b(?:import|export)\s+(?!type\s)[^'";]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/g, /\bimport\s*['"](\.{1,2}\/[^'"]+)['"]/g, /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g];

function resolveSpecifier(from, specifier) {
  const base = resolve(dirname(from), specifier);
  const candidates = /\.js$/.test(base) ? [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base] : [base, `${base}.ts`, `${base}.tsx`];
  return candidates.find((candidate) => existsSync(candidate));
}

export function backendTestFiles(root = ROOT) {
  const modules = new Map();
  /** What a module loads and whether it reads the marker itself, read once. */
  const moduleOf = (file) => {
    let module = modules.get(file);
    if (!module) {
      const text = readFileSync(file, 'utf8');
      const loads = SPECIFIERS.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => resolveSpecifier(file, m[1]))).filter(Boolean);
      module = { marked: MARKER.test(text), loads };
      modules.set(file, module);
    }
    return module;
  };
  /** Whether `file`, or anything it loads however indirectly, reads the marker. */
  const reachesMarker = (file) => {
    const seen = new Set([file]);
    const queue = [file];
    while (queue.length > 0) {
      const module = moduleOf(queue.shift());
      if (module.marked) return true;
      for (const next of module.loads) {
        if (seen.has(next)) continue;
        seen.add(next);
        queue.push(next);
      }
    }
    return false;
  };
  const tests = TEST_FOLDERS.filter((folder) => existsSync(join(root, folder))).flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && TEST_FILE.test(entry.name))
      .map((entry) => join(entry.parentPath ?? entry.path, entry.name)),
  ).sort();
  const backend = [];
  const once = [];
  /** Files that reach the store but declared themselves backend-independent, with their reason. */
  const declared = [];
  for (const file of tests) {
    const reason = ONCE.exec(readFileSync(file, 'utf8'))?.[1]?.replace(/\s*\*\/\s*$/, '');
    if (!reachesMarker(file)) once.push(relative(root, file));
    else if (reason) {
      once.push(relative(root, file));
      declared.push({ file: relative(root, file), reason });
    } else backend.push(relative(root, file));
  }
  return { backend, once, declared };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
  const { backend, once } = backendTestFiles(root ? resolve(root) : ROOT);
  process.stdout.write(`${(process.argv.includes('--once') ? once : backend).join('\n')}\n`);
}
