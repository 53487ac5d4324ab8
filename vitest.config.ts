import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    include: ['{cli,server,shared,agent,simulator,test}/**/*.test.{ts,tsx}'],
    // Three files at once on two cores: a process-level test spends most of its time waiting (for a
    // server, a child process, a timer), so two workers left the cores idle more than half the time.
    // In a 15-file sample, 2 workers took 80 s, 3 took 66 s and 4 took 58 s; but with four, the
    // CPU-bound fuzz tests on PostgreSQL ran past their timeouts on a busy machine.
    maxWorkers: 3,
    // A test file runs in a worker that has already loaded the modules it needs, instead of a new
    // process loading them all again: that loading took more of the suite's time than most tests.
    // So a test leaves nothing behind: each opens its own store, server, clock and config dir, and
    // stops what it started.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Nested store transactions throw instead of hanging (server/db/sqlite.ts); children inherit it.
    env: { POS_CHECK_UNITS: '1' },
  },
});
