/// Makes the JUnit reporter for `--junit PATH --junit-profile NAME` of a run of the tests of
/// `catalog` (where they are declared); the `AsyncHarnessJUnit` product provides one.
package typealias JUnitReporterFactory = @Sendable (_ path: String, _ profile: String, _ catalog: Catalog) throws -> any Reporter

/// Reads the testcase durations of a JUnit report for `--shard-timings PATH`; the
/// `AsyncHarnessJUnit` product provides one.
package typealias JUnitTimingsReader = @Sendable (_ path: String) throws -> [TestTiming]

/// What the command line needs from the `AsyncHarnessJUnit` product, which links libxml2
/// (so the core does not): a reporter for `--junit` and a reader for `--shard-timings`.
/// `JUnitReporter.factory` is the one to pass to ``HarnessMain/run(_:registry:defaultWaiters:junit:)``.
public struct JUnitSupport: Sendable {
  /// Makes the reporter for `--junit PATH --junit-profile NAME`.
  package let reporter: JUnitReporterFactory
  /// Reads a previous report's durations for `--shard-timings PATH`.
  package let timings: JUnitTimingsReader

  /// Creates the JUnit support from its two parts.
  /// - Parameters:
  ///   - reporter: makes the reporter for `--junit`.
  ///   - timings: reads the durations for `--shard-timings`.
  package init(reporter: @escaping JUnitReporterFactory, timings: @escaping JUnitTimingsReader) {
    self.reporter = reporter
    self.timings = timings
  }
}
