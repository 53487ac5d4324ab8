import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Process-level tests start real servers; two cores make wider parallelism slower, not faster.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Nested store transactions throw instead of hanging (server/db/sqlite.ts); children inherit it.
    env: { POS_CHECK_UNITS: '1' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['{cli,server,shared,agent,simulator}/**/*.test.{ts,tsx}'],
          // Unit tests share a worker's loaded modules: loading the server's modules again for every
          // file took most of their time. Each test still opens its own store, clock and processor.
          isolate: false,
        },
      },
      { extends: true, test: { name: 'process', include: ['test/**/*.test.{ts,tsx}'] } },
    ],
  },
});
