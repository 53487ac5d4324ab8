import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/tmp.js';

/**
 * The PostgreSQL pass of `npm test` runs only the test files that open the pos store
 * (scripts/backend-tests.mjs); a file it leaves out by mistake would lose its PostgreSQL run without
 * anyone seeing it.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'backend-tests.mjs');
const selected = (root: string, ...flags: string[]) => execFileSync(process.execPath, [SCRIPT, root, ...flags], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);

const fixture = tempDir('pos-backend-selection-');
afterAll(() => fixture.cleanup());

function write(files: Record<string, string>): string {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(fixture.path, path)), { recursive: true });
    writeFileSync(join(fixture.path, path), text);
  }
  return fixture.path;
}

describe('the files the PostgreSQL pass runs again', () => {
  it('are those whose imports, however indirect, reach what reads POS_TEST_DATABASE_URL', () => {
    const root = write({
      // Split, and in folders the real test/ has not: the scanner reads this file's text too.
      'test/support/db.ts': `export const url = process.env.${'POS_TEST_DATABASE_URL'};\n`,
      'test/support/server.ts': "import { url } from './db.js';\nexport const start = () => url;\n",
      'test/support/cli.ts': "import type { url } from './db.js';\nexport const run = (u: typeof url) => u;\n",
      'test/api.test.ts': "import {\n  start,\n} from './support/server.js';\nstart();\n",
      'test/cli.test.ts': "import { run } from './support/cli.js';\nrun(undefined);\n",
      'server/domain/rules.test.ts': "const db = await import('../../test/support/db.js');\nvoid db;\n",
      'cli/tui/View.test.tsx': "export const view = 'pure';\n",
    });
    expect(selected(root)).toEqual(['server/domain/rules.test.ts', 'test/api.test.ts']);
    expect(selected(root, '--once')).toEqual(['cli/tui/View.test.tsx', 'test/cli.test.ts']);
  });

  it('in this repository: every file on the store, and none that only runs the simulator, the CLI or the TUI', () => {
    const backend = selected(ROOT);
    const once = selected(ROOT, '--once');
    // startTestServer, openDomain, spawnServer and `pos admin` on a data dir, openTestDb, the multi-instance tests.
    expect(backend).toEqual(
      expect.arrayContaining(['test/payments-api.test.ts', 'server/payments/transactions.test.ts', 'test/lifecycle.test.ts', 'test/customers.test.ts', 'test/postgres-instances.test.ts', 'test/currencies.test.ts']),
    );
    expect(once).toEqual(expect.arrayContaining(['test/simulator-payments.test.ts', 'cli/tui/state.test.ts', 'test/tui-e2e.test.ts', 'shared/webhook-signing.test.ts', 'test/backend-selection.test.ts']));
    // Declared: on a server, but what they assert is the CLI's output and the counter's terminal.
    expect(once).toEqual(expect.arrayContaining(['test/cli.test.ts', 'test/tui-resync.test.ts']));
    expect(backend.filter((file) => once.includes(file))).toEqual([]);
  });
});
