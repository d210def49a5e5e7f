// Part of the library `harness test` preloads into a package's test bundle
// (AsyncHarnessBundleChannel.swift): the XCTest tests a worker runs, when the run chose none
// of the package's tests (no `--filter`, `--only`, shard …), are run as `swift test` runs them
// without `--filter`: the bundle gets no argument, and XCTest's suites are `All tests`, then
// the bundle's (`debug.xctest`), then each class, which observers the tests add see. Given the
// tests as its argument, XCTest would run them under `Selected tests` alone, as
// `swift test --filter` does.
//
// The bundle's `main` (SwiftPM's generated runner) calls `XCTMain(_:)`, a function of
// libXCTest.so. This library defines a function of that very symbol, which the preload puts
// first: it keeps the entries of the tests named in ASYNC_HARNESS_BUNDLE_XCTESTS and runs
// XCTest's own `XCTMain(_:arguments:observers:)` on them, as the original does on all of them.
#if os(Linux)
import Glibc
import XCTest

/// The XCTest tests this worker runs itself (`Module.Class/method`), read and removed at load
/// time by `BundleChannel.load()`; `nil` when the harness gave them as the bundle's argument.
enum BundleSelection {
  /// Set at load time, before any other thread runs, and only read after.
  nonisolated(unsafe) static var tests: Set<String>?

  /// The entries of `entries` that hold a chosen test, each with only those tests, in
  /// XCTest's order.
  static func chosen(_ entries: [XCTestCaseEntry], from tests: Set<String>) -> [XCTestCaseEntry] {
    entries.compactMap { entry in
      let name = String(reflecting: entry.testCaseClass)
      let kept = entry.allTests.filter { tests.contains("\(name)/\($0.0)") }
      return kept.isEmpty ? nil : (testCaseClass: entry.testCaseClass, allTests: kept)
    }
  }
}

/// `XCTMain(_:) -> Never` of libXCTest, as the bundle's `main` calls it: the tests the harness
/// chose when it named them, else every test with the bundle's arguments, as XCTest does.
@_silgen_name("$s6XCTest7XCTMainys5NeverOSayAA0A4CaseCm04testD5Class_SaySS_yAFKctG8allTeststGF")
public func asyncHarnessXCTMain(_ testCases: [XCTestCaseEntry]) -> Never {
  guard let tests = BundleSelection.tests else {
    exit(XCTMain(testCases, arguments: CommandLine.arguments, observers: nil) as CInt)
  }
  exit(XCTMain(BundleSelection.chosen(testCases, from: tests), arguments: Array(CommandLine.arguments.prefix(1)),
               observers: nil) as CInt)
}
#endif
