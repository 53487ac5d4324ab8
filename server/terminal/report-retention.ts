import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import { DeadlineTimer } from '../db/deadline-timer.js';
import type { Notifications } from '../db/notify.js';
import { REPORT_PRUNE_SLACK_MS } from './agent-limits.js';
import type { AgentService } from './agents.js';

/**
 * Between two prune batches: the event loop and the database serve whatever else waits first, so a
 * month of backlog pruned after an upgrade costs requests nothing they would notice.
 */
const PRUNE_PAUSE_MS = 10;

/**
 * Deletes every report received longer than the retention period ago, a bounded batch per
 * transaction with a pause between batches; answers how many went.
 */
export async function pruneExpiredReports(agents: AgentService, clock: Clock): Promise<number> {
  const before = clock.now() - agents.limits.reportRetentionMs;
  let pruned = 0;
  for (;;) {
    const batch = await agents.pruneReports(before, agents.limits.pruneBatch);
    pruned += batch;
    if (batch < agents.limits.pruneBatch) return pruned;
    await sleep(PRUNE_PAUSE_MS);
  }
}

/**
 * Report retention without a sweep: one timer per process, set for when the oldest stored report
 * passes its period (plus up to an hour, so a pass prunes an hour's reports rather than a few rows
 * every few seconds). New reports only fall due later than that, so nothing needs to wake it; with
 * no report stored, nothing can fall due before one period from now. On PostgreSQL every instance
 * prunes at the same time; the second finds the rows gone.
 */
export class ReportRetention extends DeadlineTimer {
  constructor(agents: AgentService, notifications: Notifications, clock: Clock, logger: Logger) {
    super(
      {
        pass: () => pruneExpiredReports(agents, clock),
        next: async () => ((await agents.oldestReportAt()) ?? clock.now()) + agents.limits.reportRetentionMs,
        slackMs: REPORT_PRUNE_SLACK_MS,
        name: 'report retention',
      },
      notifications,
      clock,
      logger,
    );
  }
}
