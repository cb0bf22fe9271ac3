import type { Reporter, SerializedError, TestModule, TestRunEndReason } from 'vitest/node';

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, after vitest's own
 * summary: a line any reader of a CI log (a person, or a tool that knows no vitest) can count.
 * A failed run never reads `0 failed`: a file that failed outside its tests (its imports, a hook)
 * and each unhandled error count as one failure each.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason): void {
    const counts = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    let failedOutsideTests = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        counts[state] += 1;
        if (state === 'failed') failedHere += 1;
      }
      if (module.state() === 'failed' && failedHere === 0) failedOutsideTests += 1;
    }
    // A test still pending when the run ends (interrupted) never passed.
    let failed = counts.failed + counts.pending + failedOutsideTests + unhandledErrors.length;
    if (reason !== 'passed' && failed === 0) failed = 1;
    process.stdout.write(`\ntests: ${counts.passed} passed, ${failed} failed, ${counts.skipped} skipped\n`);
  }
}
