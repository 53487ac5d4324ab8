/** The documented exit codes of `pos` (also in README.md). */
export const ExitCode = {
  ok: 0,
  /** The API (or the processor behind it) answered with an error. */
  apiError: 1,
  /** Bad command line or configuration: fix the invocation. */
  usage: 2,
  /** With --wait: the payment ended failed or canceled. */
  paymentFailed: 3,
  /** `pos audit verify`: an entry of the audit trail was altered or removed. */
  auditBroken: 4,
  /** Interrupted (Ctrl-C) while waiting: 128 + SIGINT, as a shell reports it. Nothing was undone. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
