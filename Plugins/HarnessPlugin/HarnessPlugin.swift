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
      let process = Process()
      process.executableURL = executable.url
      process.arguments = harnessFlags + ["--junit", report]
      try process.run()
      process.waitUntilExit()
      print("harness: \(product) exited with status \(process.terminationStatus); JUnit report: \(report)")
      if process.terminationStatus != 0 { failed.append(product) }
    }
    if !failed.isEmpty {
      throw PluginFailure("failing suite executables: \(failed.joined(separator: ", "))")
    }
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
