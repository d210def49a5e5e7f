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
    subcommands: [Merge.self]
  )

  static func main() {
    do {
      var command = try parseAsRoot()
      try command.run()
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
}

extension JUnitDuplicates: ExpressibleByArgument {}
