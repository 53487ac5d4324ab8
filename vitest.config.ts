import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Every answer of a /v1 operation a test file receives, and every webhook its receivers get, is
    // checked against the OpenAPI document (test/setup/contract.ts).
    setupFiles: ['test/setup/contract.ts'],
    include: ['{cli,server,shared,agent,simulator,test}/**/*.test.{ts,tsx}'],
    // Process-level tests start real servers and processes and wait on sockets, timers and fsyncs
    // more than they compute: with two files at once the two cores sat half idle (load average
    // ~1.3). Three at once on two cores, quiet (2026-11-27): the SQLite pass 170 s against 243 s with
    // two, the PostgreSQL pass 157 s against 199 s. The timing bounds hold at far more load than
    // that: the suite passes beside four engineers' builds and benchmarks (load average 10).
    maxWorkers: 3,
    // A test file runs in a worker that has already loaded the modules it needs, instead of a new
    // process loading them all again: that loading took more of the suite's time than most tests.
    // So a test leaves nothing behind: each opens its own store, server, clock and config dir, and
    // stops what it started.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Nested store transactions throw instead of hanging (server/db/sqlite.ts); children inherit it.
    env: { POS_CHECK_UNITS: '1', POS_CHECK_REFUSALS: '1' },
    experimental: {
      // Compiled test and source modules are kept under node_modules and reused by the next run:
      // compiling them again took a third of a unit-test run's time.
      fsModuleCache: true,
    },
  },
});
