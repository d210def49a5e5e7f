import AsyncHarness

/// Reads the durations of a JUnit report's testcases, for balancing shards by time
/// (`--shard-timings`): ours, or any report whose testcases carry `classname`, `name` and
/// `time` (testcases without a numeric `time` are left out), at any depth of nested suites.
///
/// ```swift
/// let timings = try readJUnitTimings("reports/previous.xml")
/// ```
///
/// - Parameter path: the report.
/// - Returns: one timing for each testcase with a time, in document order.
/// - Throws: ``JUnitError/unreadableReport(path:reason:)`` when the file is missing,
///   unreadable, not well-formed or not a JUnit report.
public func readJUnitTimings(_ path: String) throws -> [TestTiming] {
  var timings: [TestTiming] = []
  let root = try XMLReader.read(path, matching: { name, _ in name == "testcase" }) { testCase in
    guard let seconds = testCase.attribute("time").flatMap(Double.init), seconds.isFinite, seconds >= 0 else { return }
    timings.append(TestTiming(classname: testCase.attribute("classname") ?? "", name: testCase.attribute("name") ?? "",
                              seconds: seconds))
  }
  guard root.name == "testsuites" || root.name == "testsuite" else {
    throw JUnitError.unreadableReport(path: path, reason: "not a JUnit report (the root element is <\(root.name)>)")
  }
  return timings
}
