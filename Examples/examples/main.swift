import AsyncHarness
import ExampleSuites
import Foundation

// `swift run examples [harness flags]`: every example suite, by default under every waiter
// strategy (the matrix). `--waiter NAME` picks one strategy instead.
var arguments = Array(CommandLine.arguments.dropFirst())
if !arguments.contains(where: { $0 == "--waiter" || $0.hasPrefix("--waiter=") }) {
  arguments = ["--waiter", "all"] + arguments
}
exit(HarnessMain.status(arguments: arguments, suites: allExampleSuites))
