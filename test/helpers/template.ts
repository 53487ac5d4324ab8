import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Makes a data dir's SQLite file start as the run's migrated template (test/global-setup.ts), whatever
 * backend the suite runs on: migrating from nothing takes about a second, longer than most tests.
 * Without a template (vitest started with another config) the store migrates as usual. Apart from
 * helpers/db.ts so that a test of the embedded store alone can use it and still run once.
 */
export function seedSqliteDataDir(dataDir: string): void {
  const template = process.env.POS_TEST_SQLITE_TEMPLATE;
  if (!template) return;
  for (const file of ['pos.db', 'pos.db-wal']) {
    if (existsSync(join(template, file))) copyFileSync(join(template, file), join(dataDir, file));
  }
}
