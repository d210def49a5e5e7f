import AsyncHarness
import AsyncHarnessJUnit
import Foundation

// `harness test`: runs a package's own XCTest and Swift Testing tests under the harness (see
// the DocC article "Running the tests you already have").
exit(HarnessTestCommand.status(arguments: Array(CommandLine.arguments.dropFirst()), junit: JUnitReporter.factory))
