import Foundation
import HarnessTestSupport
import XCTest

/// `harness test`'s command line: its help shows the flags that apply, and a flag it does not
/// take is refused with where it belongs (a suites executable's, `swift test`'s, `swift build`'s).
final class HarnessTestCommandLineTests: ReportTestCase {
  /// `harness test --help` shows its own flags and those it shares with suites executables,
  /// not those of harness suites alone.
  func testTheHelpShowsOnlyTheFlagsThatApply() throws {
    let run = try runToEnd(try builtHarness(), ["test", "--help"])
    XCTAssertEqual(run.status, 0, run.errors)
    for flag in ["--package-path <dir>", "--skip-build", "--filter <text>", "--skip <text>", "--retries <N>", "--workers <N>", "--junit <path>",
                 "--shuffle [<seed>]", "--rerun-failed", "--shard <index/count>", "--explore <N>", "--explore-policy <policy>",
                 "--schedule <token>", "--attachments-path <dir>", "<build flags>"] {
      XCTAssertTrue(run.output.contains("  \(flag)"), "\(flag) is missing from\n\(run.output)")
    }
    for flag in ["--waiter", "--isolation", "--timeout", "--jitter", "--no-capture", "--async-width"] {
      XCTAssertFalse(run.output.contains(flag), "\(flag) does not apply, yet\n\(run.output)")
    }
    let root = try runToEnd(try builtHarness(), ["--help"])
    XCTAssertEqual(root.status, 0, root.errors)
    XCTAssertTrue(root.output.contains("USAGE: harness <subcommand>") && root.output.contains("\n  test "), root.output)
    let none = try runToEnd(try builtHarness(), [])
    XCTAssertEqual(none.status, 2)
    XCTAssertTrue(none.errors.hasPrefix("error: no command; the command is test\n"), none.errors)
  }

  func testAFlagOfSuitesOnlyIsRefused() throws {
    for flags in [["--waiter", "semaphore"], ["--jitter"], ["--isolation", "none"], ["--async-width", "10"]] {
      let run = try runToEnd(try builtHarness(), ["test"] + flags)
      XCTAssertEqual(run.status, 2)
      XCTAssertTrue(run.errors.hasPrefix("error: \(flags[0]) does not apply to harness test: the package's tests run in its "
        + "test bundle, under its own testing library\nUSAGE: harness test "), run.errors)
    }
    // `swift test`'s and `swift build`'s flags are told where they go, or what to write instead.
    for (flags, message) in [
      (["--parallel"], "--parallel is a flag of swift test; in harness test, --workers N runs the tests in N worker processes"),
      (["--xunit-output", "x.xml"], "--xunit-output is a flag of swift test; in harness test, --junit PATH writes a JUnit XML report"),
      (["-c", "release"], "-c is a flag of swift build: build flags go after --, as in harness test -- -c …"),
      (["--scratch-path=x"], "--scratch-path is a flag of swift build: build flags go after --, as in harness test -- --scratch-path …"),
    ] {
      let run = try runToEnd(try builtHarness(), ["test"] + flags)
      XCTAssertEqual(run.status, 2)
      XCTAssertTrue(run.errors.hasPrefix("error: \(message)\nUSAGE: harness test "), run.errors)
    }
    let unknown = try runToEnd(try builtHarness(), ["test", "--no-such-flag"])
    XCTAssertEqual(unknown.status, 2)
    XCTAssertTrue(unknown.errors.hasPrefix("error: Unknown option '--no-such-flag'\n"), unknown.errors)
  }

  /// `--attachments-path DIR`, as `swift test`'s (which refused it before): Swift Testing saves
  /// what the tests attach there, a path relative to the working directory too, and each
  /// attachment says the file it was saved as. A directory that does not exist is a usage error.
  func testAttachmentsAreSavedWhereAttachmentsPathSays() throws {
    let package = FixturePackage("ExistingTests", scratch: "existing-tests-scratch")
    try package.build()
    try FileManager.default.createDirectory(at: directory.appendingPathComponent("saved"), withIntermediateDirectories: true)
    let run = try runToEnd(try builtHarness(), [
      "test", "--package-path", package.directory.path, "--skip-build", "--filter", "attachesALog", "--attachments-path", "saved",
      "--", "--scratch-path", package.scratch.path,
    ], in: directory, limit: 300)
    XCTAssertEqual(run.status, 0, run.output + run.errors)
    let saved = directory.appendingPathComponent("saved/ledger.log").path
    XCTAssertTrue(run.output.contains(": Attached 'ledger.log' to attachesALog(); saved as \(saved)\n"), run.output)
    XCTAssertEqual(try String(contentsOfFile: saved, encoding: .utf8), String(repeating: "debit 1 credit 1\n", count: 1 << 16))
    let missing = try runToEnd(try builtHarness(), ["test", "--package-path", package.directory.path, "--skip-build",
                                                    "--attachments-path", path("nowhere")])
    XCTAssertEqual(missing.status, 2)
    XCTAssertEqual(missing.errors, "error: --attachments-path \"\(path("nowhere"))\" is not a directory: Swift Testing saves "
                     + "attachments in an existing one\n")
  }
}
