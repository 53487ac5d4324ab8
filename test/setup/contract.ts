import { appendFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { checked, checkFetchAnswers, takeViolations } from '../helpers/contract.js';

/**
 * Every test file's check of the /v1 contract (test/helpers/contract.ts). Whatever way a test
 * reaches a /v1 operation in its own process — the tests' client (helpers/api.ts), a raw `fetch`,
 * the generated client, `PosApi` under the CLI or the agent — the answer is checked against the
 * document by operation and status, and so is every webhook delivery a test receiver gets. A test
 * during which a violation was seen fails here, even if its code swallowed the throw.
 */
checkFetchAnswers();

let atStart = { answers: 0, webhooks: 0 };
let file = '';
beforeAll(() => {
  atStart = { ...checked };
});

afterEach(() => {
  file = expect.getState().testPath ?? file;
  const violations = takeViolations();
  expect(violations.map((v) => v.message), 'answers or webhook deliveries the /v1 document does not allow').toEqual([]);
});

afterAll(() => {
  const left = takeViolations();
  // POS_CONTRACT_REPORT=file: one line per test file, how many answers and deliveries were checked.
  const report = process.env.POS_CONTRACT_REPORT;
  if (report) {
    appendFileSync(report, `${JSON.stringify({ file, answers: checked.answers - atStart.answers, webhooks: checked.webhooks - atStart.webhooks, violations: left.length })}\n`);
  }
  expect(left.map((v) => v.message), 'answers or webhook deliveries the /v1 document does not allow, outside any test').toEqual([]);
});
