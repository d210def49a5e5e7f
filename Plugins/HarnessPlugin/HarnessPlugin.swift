import Foundation
import PackagePlugin

/// `swift package harness`: builds the package's suite executables, runs each one, and
/// writes a JUnit report per executable.
///
/// ```
/// swift package --allow-writing-to-package-directory harness [--product NAME]… [--reports DIR] [-- HARNESS FLAGS]
/// ```
///
/// Suite executables are the executable products named `examples` or ending in `Suites`
/// or `-suites`, unless `--product` names others. Flags after `--` go to every executable
/// (e.g. `--waiter all`). Reports go to `DIR/PRODUCT.xml` (default `.build/reports`).
@main
struct HarnessPlugin: CommandPlugin {
  func performCommand(context: PluginContext, arguments: [String]) async throws {
    var extractor = ArgumentExtractor(arguments)
    let named = extractor.extractOption(named: "product")
    let reports = extractor.extractOption(named: "reports").last ?? ".build/reports"
    let harnessFlags = extractor.remainingArguments

    let executables = context.package.products(ofType: ExecutableProduct.self).map(\.name)
    let products = named.isEmpty ? executables.filter(Self.isSuiteExecutable) : named
    for product in products where !executables.contains(product) {
      throw PluginFailure("no executable product named \(product); executables: \(executables.joined(separator: ", "))")
    }
    guard !products.isEmpty else {
      throw PluginFailure("no suite executables found: name one with --product, or name the product examples, …Suites or …-suites")
    }

    let reportDirectory = URL(fileURLWithPath: reports, relativeTo: context.package.directoryURL)
    try FileManager.default.createDirectory(at: reportDirectory, withIntermediateDirectories: true)
    var failed: [String] = []
    for product in products {
      let build = try packageManager.build(.product(product), parameters: .init(configuration: .debug, echoLogs: false))
      guard build.succeeded, let executable = build.builtArtifacts.first(where: { $0.kind == .executable }) else {
        Diagnostics.error(build.logText)
        throw PluginFailure("building \(product) failed")
      }
      let report = reportDirectory.appendingPathComponent("\(product).xml").path
      // A report left by an earlier run must not pass for this run's.
      if FileManager.default.fileExists(atPath: report) { try FileManager.default.removeItem(atPath: report) }
      let process = Process()
      process.executableURL = executable.url
      process.arguments = harnessFlags + ["--junit", report]
      try process.run()
      process.waitUntilExit()
      let outcome = Self.outcome(of: product, reason: process.terminationReason, status: process.terminationStatus,
                                 report: report, reportWritten: FileManager.default.fileExists(atPath: report))
      print(outcome.line)
      if !outcome.succeeded { failed.append(product) }
    }
    if !failed.isEmpty {
      throw PluginFailure("failing suite executables: \(failed.joined(separator: ", "))")
    }
  }

  /// What the plugin says about one executable's run, and whether it counts as a success:
  /// only an exit status of 0 with a report written. It names the report only when one was
  /// written.
  static func outcome(of product: String, reason: Process.TerminationReason, status: Int32,
                      report: String, reportWritten: Bool) -> (line: String, succeeded: Bool) {
    let ended = switch (reason, status) {
    case (.uncaughtSignal, _): "\(product) was killed by signal \(status)"
    case (_, 2): "\(product) exited with status 2 (a usage error, see its message above)"
    case (_, 1): "\(product) exited with status 1 (a test failed)"
    default: "\(product) exited with status \(status)"
    }
    let written = reportWritten ? "JUnit report: \(report)" : "no JUnit report was written"
    return ("harness: \(ended); \(written)", reason == .exit && status == 0 && reportWritten)
  }

  static func isSuiteExecutable(_ name: String) -> Bool {
    name == "examples" || name.hasSuffix("Suites") || name.hasSuffix("-suites")
  }
}

/// A message for the person at the terminal.
struct PluginFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
