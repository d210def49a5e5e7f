import AsyncHarness
import AsyncHarnessJUnit
import ExampleSuites

// `swift run examples [harness flags]` (in Examples/): every example suite, by default under every waiter
// strategy (the matrix). `--waiter NAME` picks one strategy instead; `--junit PATH` writes
// a JUnit report.
HarnessMain.run(allExampleSuites, defaultWaiters: .all, junit: JUnitReporter.factory)
