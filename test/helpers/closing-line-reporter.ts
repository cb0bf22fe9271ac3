import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, after vitest's own
 * summary: a line any reader of a CI log (a person, or a tool that knows no vitest) can count.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) counts[test.result().state] += 1;
    }
    // A test still pending when the run ends (interrupted) never passed.
    const failed = counts.failed + counts.pending;
    process.stdout.write(`\ntests: ${counts.passed} passed, ${failed} failed, ${counts.skipped} skipped\n`);
  }
}
