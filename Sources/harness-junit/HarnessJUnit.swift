import ArgumentParser
import AsyncHarnessJUnit
import Foundation

/// `harness-junit`: tools for AsyncHarness JUnit reports.
///
/// Exit status: 0 on success, 1 when the work fails (the message says why), 2 on usage errors.
@main
struct HarnessJUnit: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "harness-junit",
    abstract: "Tools for AsyncHarness JUnit XML reports.",
    subcommands: [Merge.self, FromEvents.self, FromSwiftTesting.self, SwiftTest.self]
  )

  static func main() {
    do {
      var command = try parseAsRoot()
      try command.run()
    } catch let status as ExitCode {
      Self.exit(withError: status)
    } catch {
      let code = exitCode(for: error)
      let message = fullMessage(for: error)
      if code == .success {
        print(message)
        Self.exit()
      }
      FileHandle.standardError.write(Data((message + "\n").utf8))
      Self.exit(withError: ExitCode(code == .validationFailure ? 2 : 1))
    }
  }

  struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Merge JUnit reports from shards or processes into one report.",
      discussion: """
        Suites with the same name become one suite; counts are recomputed from the testcases. \
        A testcase that appears more than once (same classname and name) is an error unless \
        --duplicates says otherwise. With --expect-shards N, the inputs must be the reports of \
        shards 1 to N of one run, each once: a missing shard is named. \
        Example: harness-junit merge shard-*.xml --expect-shards 3 -o all.xml
        """
    )

    @Argument(help: "The reports to merge.")
    var inputs: [String]

    @Option(name: .shortAndLong, help: "The merged report to write.")
    var output: String

    @Option(help: ArgumentHelp(
      "A testcase that appears more than once: refuse to merge (error), keep the last one (keep-last), or rename the later ones (rename).",
      valueName: "error|keep-last|rename"))
    var duplicates: JUnitDuplicates = .error

    @Option(help: ArgumentHelp("Check that the inputs are the reports of shards 1 to N of one run, each once.", valueName: "N"))
    var expectShards: Int?

    func validate() throws {
      if inputs.isEmpty { throw ValidationError("Give at least one report to merge.") }
      if let expectShards, expectShards < 1 { throw ValidationError("--expect-shards must be at least 1, not \(expectShards)") }
    }

    func run() throws {
      try mergeJUnitReports(inputs, into: output, duplicates: duplicates, expectShards: expectShards)
    }
  }

  struct FromEvents: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "from-events",
      abstract: "Convert an AsyncHarness event stream (--json) into a JUnit report.",
      discussion: """
        The stream is what a suites executable or harness test writes with --json PATH, of any \
        schema version (1 to 3): the report is the one the run would have written with --junit. \
        Example: harness-junit from-events events.jsonl -o report.xml
        """
    )

    @OptionGroup var conversion: Conversion

    func run() throws {
      try convertHarnessEvents(conversion.input, toJUnit: conversion.output, profile: conversion.profile)
    }
  }

  struct FromSwiftTesting: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "from-swift-testing",
      abstract: "Convert a Swift Testing event stream into a JUnit report.",
      discussion: """
        The stream is what swift test --event-stream-output-path PATH --event-stream-version 6.3 \
        writes (with SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED=1 for skip reasons and thrown \
        errors), or --event-stream-version 0. A test that started and never ended (the process crashed) is an error naming it. \
        Example: harness-junit from-swift-testing events.jsonl -o report.xml
        """
    )

    @OptionGroup var conversion: Conversion

    func run() throws {
      try convertSwiftTestingEvents(conversion.input, toJUnit: conversion.output, profile: conversion.profile)
    }
  }

  /// What a conversion of an event stream into a report is given: the stream, the report,
  /// its profile.
  struct Conversion: ParsableArguments {
    @Argument(help: "The event stream to convert (JSON Lines).")
    var input: String

    @Option(name: .shortAndLong, help: "The report to write.")
    var output: String

    @Option(help: ArgumentHelp("The attributes written beyond the standard profile.", valueName: "standard|github"))
    var profile: JUnitProfile = .standard
  }

  struct SwiftTest: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "swift-test",
      abstract: "Run swift test and write one JUnit report of its XCTest and Swift Testing tests.",
      discussion: """
        Runs swift test with the arguments after --, reporting the XCTest tests through \
        AsyncHarnessXCTestJUnit (link it into a test target) and the Swift Testing tests through \
        their event stream, then merges both into the report. Exits with swift test's status. \
        Run it as a built executable or with swift run, never inside swift test. \
        Example: swift run harness-junit swift-test -o .build/reports/junit.xml -- --filter Loader
        """
    )

    @Option(name: .shortAndLong, help: "The merged report to write.")
    var output: String

    @Option(help: ArgumentHelp("The attributes written beyond the standard profile.", valueName: "standard|github"))
    var profile: JUnitProfile = .standard

    @Argument(parsing: .postTerminator, help: "Arguments for swift test (after --).")
    var swiftTestArguments: [String] = []

    func validate() throws {
      if let flag = swiftTestArguments.first(where: { $0 == "--parallel" || $0.hasPrefix("--event-stream") }) {
        throw ValidationError(
          "swift test \(flag) cannot be combined with swift-test: it reports XCTest tests from one process "
            + "and sets the event stream itself")
      }
    }

    func run() throws {
      let outcome = try runSwiftTest(arguments: swiftTestArguments, report: output, profile: profile)
      for note in outcome.notes { FileHandle.standardError.write(Data("harness-junit: \(note)\n".utf8)) }
      print("harness-junit: swift test exited with status \(outcome.status); JUnit report: \(output)")
      if outcome.status != 0 { throw ExitCode(outcome.status) }
    }
  }
}

extension JUnitDuplicates: ExpressibleByArgument {}
extension JUnitProfile: ExpressibleByArgument {}
