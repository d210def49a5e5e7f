import AsyncHarness
import AsyncHarnessJUnit
import ExampleSuites
import Foundation

// `swift run examples [harness flags]`: every example suite, by default under every waiter
// strategy (the matrix). `--waiter NAME` picks one strategy instead; `--junit PATH` writes
// a JUnit report.
var arguments = Array(CommandLine.arguments.dropFirst())
if !arguments.contains(where: { $0 == "--waiter" || $0.hasPrefix("--waiter=") }) {
  arguments = ["--waiter", "all"] + arguments
}
exit(HarnessMain.status(arguments: arguments, suites: allExampleSuites, junit: JUnitReporter.factory))
