import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import { DeadlineTimer } from '../db/deadline-timer.js';
import type { Notifications } from '../db/notify.js';
import type { ReaderActions } from './reader-actions.js';

/**
 * Reader reconciliation without a sweep, like presence expiry: one timer per process, set for the
 * earliest `action_check_at` in the database. A change that makes a new or earlier deadline sends the
 * `reader_checks` notice and the timer is set again; when it fires, the overdue readers are read
 * once each (server/terminal/reader-actions.ts) and the timer is set for the next deadline. With no
 * action in progress anywhere there is no timer and no query.
 */
export class ReaderReconciler extends DeadlineTimer {
  constructor(actions: ReaderActions, notifications: Notifications, clock: Clock, logger: Logger) {
    super(
      { notice: { topic: 'reader_checks' }, pass: () => actions.reconcile(), next: () => actions.nextCheck(), slackMs: 0, name: 'reader reconciliation' },
      notifications,
      clock,
      logger,
    );
  }
}
