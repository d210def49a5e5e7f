import AsyncHarness
import AsyncHarnessJUnit
import AsyncHarnessXCTest
import Foundation
import Synchronization
import XCTest

/// Writes the XCTest tests of a `swift test` run as a JUnit report, with failure messages,
/// `file` and `line`, skips and times, and without `--parallel`.
///
/// Link this library into one test target of the package, then set `ASYNCHARNESS_JUNIT`:
///
/// ```
/// ASYNCHARNESS_JUNIT=.build/reports/xctest.xml swift test
/// ```
///
/// When the test executable loads, this library registers an `AsyncHarnessXCTest.XCTestObserver`
/// that writes the report when the XCTest tests end, on Linux (where XCTest has no principal
/// class) as on Apple platforms. `ASYNCHARNESS_JUNIT_PROFILE=github` adds `file` and `line`
/// to failing testcases (`AsyncHarnessJUnit.JUnitProfile.github`). Without the variable,
/// nothing is registered; ``register(path:profile:)`` registers it from code instead. It is a
/// library of its own so that only the packages that want JUnit link libxml2.
///
/// Run the tests in one process (no `--parallel`): each process of a parallel run would
/// replace the report.
public enum XCTestJUnit {
  /// The environment variable that names the report: `ASYNCHARNESS_JUNIT`.
  public static let pathVariable = "ASYNCHARNESS_JUNIT"
  /// The environment variable that names the profile: `ASYNCHARNESS_JUNIT_PROFILE`
  /// (`standard`, the default, or `github`).
  public static let profileVariable = "ASYNCHARNESS_JUNIT_PROFILE"

  private static let registered = Mutex<Set<String>>([])

  /// Registers an observer that writes this process's XCTest tests to `path` as JUnit when
  /// they end. Call it before the tests start (from a principal class on Apple platforms);
  /// registering the same path again does nothing.
  ///
  /// - Parameters:
  ///   - path: The report file, replaced when the XCTest tests end.
  ///   - profile: The attributes written beyond the standard profile.
  public static func register(path: String, profile: JUnitProfile = .standard) {
    guard registered.withLock({ $0.insert(path).inserted }) else { return }
    XCTestObservationCenter.shared.addTestObserver(
      XCTestObserver { try JUnitReporter(path: path, profile: profile) })
  }

  /// Registers the observer when ``pathVariable`` is set.
  ///
  /// - Parameter environment: The process's environment.
  /// - Returns: Why the variables are unusable (an empty or unwritable path, an unknown
  ///   profile), or `nil`.
  static func register(from environment: [String: String]) -> String? {
    guard let path = environment[pathVariable] else { return nil }
    guard !path.isEmpty else { return "\(pathVariable) is empty: set it to the report's path" }
    if let reason = ReportDestination.problem(with: path) {
      return "\(pathVariable)=\(path) cannot be written: \(reason)"
    }
    let profileName = environment[profileVariable] ?? JUnitProfile.standard.name
    guard let profile = JUnitProfile(rawValue: profileName) else {
      let names = JUnitProfile.allCases.map(\.name).joined(separator: ", ")
      return "\(profileVariable)=\(profileName) is not a JUnit profile (\(names))"
    }
    register(path: path, profile: profile)
    return nil
  }
}

/// Called by the load-time constructor in `AsyncHarnessXCTestJUnitLoader` when
/// `ASYNCHARNESS_JUNIT` is set; unusable variables stop the process with status 2, naming
/// the variable and its value, before any test runs.
@_cdecl("asyncharness_xctest_junit_register_from_environment")
func registerFromEnvironment() {
  guard let problem = XCTestJUnit.register(from: ProcessInfo.processInfo.environment) else { return }
  FileHandle.standardError.write(Data("AsyncHarness: \(problem)\n".utf8))
  exit(2)
}
