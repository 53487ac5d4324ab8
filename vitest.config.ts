import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    include: ['{cli,server,shared,agent,simulator,test}/**/*.test.{ts,tsx}'],
    // Process-level tests start real servers; two cores make wider parallelism slower, not faster.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Nested store transactions throw instead of hanging (server/db/sqlite.ts); children inherit it.
    env: { POS_CHECK_UNITS: '1' },
  },
});
