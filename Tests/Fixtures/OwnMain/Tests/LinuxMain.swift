import ChecksTests
import Foundation

// The bundle's entry point: its own checks, no XCTest; its exit status is the verdict.
exit(runChecks() ? 0 : 1)
