import AsyncHarness
import Foundation
import HarnessTestSupport
import Synchronization
import XCTest

@testable import AsyncHarnessJUnit

/// A temporary directory per test, removed afterwards.
class ReportTestCase: XCTestCase {
  var directory: URL!

  override func setUpWithError() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("junit-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  override func tearDownWithError() throws {
    try FileManager.default.removeItem(at: directory)
  }

  func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

  /// Feeds `events` to a new reporter, finishes it and parses the report back with libxml2.
  func report(
    _ events: [Event], profile: JUnitProfile = .standard, outputLimit: Int = 1_048_576,
    file: String = "report.xml"
  ) throws -> ParsedElement {
    let reporter = try JUnitReporter(path: path(file), profile: profile, outputLimit: outputLimit)
    for event in events { try reporter.handle(event) }
    try reporter.finish()
    return try XMLReader.readDocument(path(file))
  }
}

/// Builds the events the runner sends for one suite × waiter: each test's start, its `extra`
/// events, an `issueRecorded` for each issue of its result, and its end.
func suiteEvents(
  _ suite: String, waiter: String = "semaphore", duration: Double = 0.5,
  _ tests: [(name: String, result: TestResult, extra: [TestEvent])]
) -> [Event] {
  let run = SuiteRun(suite: suite, host: waiter)
  var events = [Event(.suiteStarted(run))]
  var summary = Summary()
  for test in tests {
    let id = TestID(suite: suite, name: test.name, host: waiter)
    events.append(Event(.testStarted(id)))
    events += test.extra.map { Event($0(id)) }
    events += ended(id, test.result, duration: 0.25).map { Event($0) }
    summary.count(test.result.verdict)
  }
  events.append(Event(.suiteEnded(run, summary, duration: duration)))
  return events
}

/// An event about a test, made once the test's identity is known.
typealias TestEvent = @Sendable (TestID) -> Event.Kind

func runEvents(_ suites: [Event]..., seed: UInt64? = nil, jitterSeed: UInt64? = nil, repetitions: Int = 1) -> [Event] {
  [Event(.runStarted(RunInfo(seed: seed, jitterSeed: jitterSeed, repetitions: repetitions, waiters: ["semaphore"])))]
    + suites.flatMap { $0 } + [Event(.runEnded(Summary(), duration: 1.5))]
}

func output(_ text: String) -> TestEvent { { .outputCaptured($0, text) } }

let passed = TestResult(verdict: .passed)

/// A location inside the current directory, so reports show it relative.
func localLocation(_ relative: String, line: Int) -> SourceLocation {
  SourceLocation(
    fileID: "Module/\((relative as NSString).lastPathComponent)",
    filePath: FileManager.default.currentDirectoryPath + "/" + relative, line: line, column: 1)
}

extension ParsedElement {
  /// Every testcase in the report, in order.
  var testCases: [ParsedElement] { elements(named: "testsuite").flatMap { $0.elements(named: "testcase") } }

  /// The attributes as a dictionary, for exact comparisons.
  var attributeMap: [String: String] {
    Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0.value) })
  }
}


/// The executable `name` of this package, built next to the tests, or a skip when it is not.
func builtExecutable(_ name: String) throws -> URL {
  let tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
  guard FileManager.default.isExecutableFile(atPath: tool.path) else {
    throw XCTSkip("\(name) is not built next to the tests (swift build first)")
  }
  return tool
}

/// The `harness-junit` executable built next to the tests, or a skip when it is not.
func harnessJUnit() throws -> URL { try builtExecutable("harness-junit") }

/// The `harness-fixture` executable built next to the tests, or a skip when it is not.
func harnessFixture() throws -> URL { try builtExecutable("harness-fixture") }

/// Runs `tool` to its end and returns its exit status and what it wrote to standard output
/// and standard error (read side by side, so neither pipe can fill up and stall it); in
/// `environment` when given, else in this process's, and in `directory` when given; with
/// `input` as its standard input when given. A child still running after `limit` seconds is
/// killed (its status is then 128 + SIGKILL), so a hang fails a test instead of stalling it.
func runToEnd(
  _ tool: URL, _ arguments: [String], environment: [String: String]? = nil, in directory: URL? = nil,
  input: FileHandle? = nil, limit: Double = 300
) throws -> (status: Int32, output: String, errors: String) {
  let process = Process()
  process.executableURL = tool
  process.arguments = arguments
  if let environment { process.environment = environment }
  if let directory { process.currentDirectoryURL = directory }
  if let input { process.standardInput = input }
  let watchdog = DispatchWorkItem { kill(process.processIdentifier, SIGKILL) }
  defer { watchdog.cancel() }
  let output = Pipe()
  let errors = Pipe()
  process.standardOutput = output
  process.standardError = errors
  try process.run()
  DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: watchdog)
  let errorText = Mutex("")
  let errorsRead = DispatchGroup()
  DispatchQueue.global().async(group: errorsRead) {
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    errorText.withLock { $0 = text }
  }
  let outputText = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  errorsRead.wait()
  process.waitUntilExit()
  return (process.terminationStatus, outputText, errorText.withLock { $0 })
}

/// The `harness` executable built next to the tests, or a skip when it is not.
func builtHarness() throws -> URL { try builtExecutable("harness") }

/// A package of `Tests/Fixtures` that `harness test` runs, built once per test process into a
/// scratch path of its own (under the checkout's `.build/fixtures`), so that its build never
/// waits for the lock of the `swift test` running these tests, never writes into the fixture's
/// directory, and each run's own build finds nothing to do.
final class FixturePackage: Sendable {
  /// The package's directory.
  let directory: URL
  /// Its scratch path: pass `-- --scratch-path` it to `harness test`.
  let scratch: URL
  private let built = Mutex(false)

  /// The fixture `Tests/Fixtures/<name>`, built into `.build/fixtures/<scratch>`.
  init(_ name: String, scratch: String) {
    let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    directory = checkout.appendingPathComponent("Tests/Fixtures/\(name)")
    self.scratch = checkout.appendingPathComponent(".build/fixtures/\(scratch)")
  }

  /// Builds the package's tests, the first time; a skip when they do not build.
  func build() throws {
    try built.withLock { built in
      guard !built else { return }
      let build = try runToEnd(URL(fileURLWithPath: "/usr/bin/env"), [
        "swift", "build", "--build-tests", "--package-path", directory.path, "--scratch-path", scratch.path,
      ], limit: 600)
      guard build.status == 0 else { throw XCTSkip("the fixture does not build:\n\(build.output)\(build.errors)") }
      built = true
    }
  }
}
