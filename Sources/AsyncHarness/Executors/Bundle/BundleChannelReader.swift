/// What one record of a test bundle's channel says about the tests it runs, whichever
/// testing library runs them.
enum BundleNote: Equatable {
  /// A test began, by its ID as the bundle lists it (``ExistingTest/id``).
  case started(String)
  /// A test recorded an issue; one without a location is at the test's declaration. The ID
  /// may be a Swift Testing suite's (a trait of it failed), or that of a test that ended.
  case issue(String, Issue)
  /// An issue that names no test: Swift Testing's «unknown», recorded once its test returned.
  case issueOfNoTest(Issue)
  /// XCTest began a class (`Module.Class`): its `class func setUp()` runs next, then its tests.
  case classStarted(String)
  /// XCTest ended a class: its tests and its `class func tearDown()` ran.
  case classEnded(String)
  /// A test ended: skipped with `skipReason` when that is set, after `seconds` when the
  /// library says.
  case ended(String, skipReason: String?, seconds: Double?)
  /// These processes were running as the test whose end comes next ended (`PID (command
  /// line)`).
  case leftProcesses([String])
  /// Under a schedule (`--explore`, `--schedule`), the steps the bundle's Swift concurrency
  /// took up to the end that comes next, of how many `jobs`, `outside` of them sent from
  /// threads the schedule does not run while its own work ran; `escapedAt`, the step whose job
  /// kept the schedule's thread, after which Swift's own executors ran every job; `hookedAt`,
  /// the step after which the test's own executor hook took its jobs, which then ran unexplored.
  case schedule(ScheduleTrace, jobs: Int, outside: Int, escapedAt: Int?, hookedAt: Int? = nil)
  /// Under a schedule and `--trace`, the running test's schedule took step `number`, running a
  /// job of `ran` (`task #3`), at this virtual time.
  case step(Int, ran: String, virtualTime: Duration)
  /// Under a schedule, the running test's Swift concurrency work has nothing left to run,
  /// nothing due and nothing arriving: it is stuck, at this virtual time.
  case stuck(virtualTime: Duration)
}

/// How a worker of one testing library is started, and how the records its library writes
/// on the worker's private channel are read. The channel is a pipe handed over as
/// descriptor 3; the preloaded library (``BundleChannelLibrary``) moves it out of the tests'
/// reach and writes each record there whole, just after a numbered marker line on the
/// bundle's standard output (``MarkedOutput``). The tests' standard output and standard error
/// are only their output, and nothing they print is read as the library's words.
///
/// - XCTest: `<bundle> Module.Class/a,Module.Class/b`; the library's observer writes a record
///   for each test's start, each failure (its file and line, or a thrown error), and its end
///   with XCTest's own outcome. The verdict is XCTest's: a test XCTest failed without telling
///   its observers of a failure still fails.
/// - Swift Testing: `<bundle> --testing-library swift-testing --filter '^(id1|id2)$'
///   --verbosity <Int.min> --event-stream-output-path /dev/fd/3 --event-stream-version 0`:
///   Swift Testing's own event stream (``SwiftTestingRecord``), each record written on the
///   thread that posts its event, and no console output of its own (the lowest verbosity).
///   Swift Testing runs the tests in its default parallel run, as `swift test` does, so that
///   it honours `.serialized`, its suites' traits and its own width.
enum BundleChannelReader {
  /// An XCTest worker's reader: the issues the observer told so far of each test running (a
  /// test may run XCTest tests of its own inside it).
  case xctest(told: [String: [Issue]])
  /// A Swift Testing worker's reader: the one decoder of Swift Testing's records
  /// (``SwiftTestingDecoder``), which `harness-junit` reads a stream with too.
  case swiftTesting(SwiftTestingDecoder)

  /// A reader for `library`'s records.
  init(_ library: TestLibrary) {
    self = library == .xctest ? .xctest(told: [:]) : .swiftTesting(SwiftTestingDecoder())
  }

  /// The library whose records it reads.
  var library: TestLibrary {
    if case .xctest = self { .xctest } else { .swiftTesting }
  }

  /// The library's name in messages.
  var libraryName: String {
    if case .xctest = self { "XCTest" } else { "Swift Testing" }
  }

  /// Whether the library runs one test at a time in a worker (XCTest does; Swift Testing runs
  /// its tests side by side).
  var runsOneTestAtATime: Bool {
    if case .xctest = self { true } else { false }
  }

  /// The exit statuses of a worker that ran every test it found: XCTest's 0 and 1 (a
  /// failure), and Swift Testing's 69 too (no test matched the filter).
  var statusesOfACompleteRun: [Int32] {
    if case .xctest = self { [0, 1] } else { [0, 1, 69] }
  }

  /// The most bytes of test IDs one worker's list holds. The list is one argument, and Linux
  /// takes at most 128 KiB in one (`MAX_ARG_STRLEN`); Swift Testing's filter escapes each
  /// ID, which can double it.
  static let listLimit = 48 * 1024

  /// The arguments of the bundle running `tests`, `oneAtATime` or as the library runs them.
  func arguments(running tests: [ExistingTest], oneAtATime: Bool = false) -> [String] {
    guard case .swiftTesting = self else { return [tests.map(\.id).joined(separator: ",")] }
    let filter = "^(" + tests.map { Self.escaped($0.id) }.joined(separator: "|") + ")$"
    return ["--testing-library", "swift-testing", "--filter", filter] + (oneAtATime ? ["--no-parallel"] : [])
      + ["--verbosity", String(Int.min), "--event-stream-output-path", "/dev/fd/\(BundleChannelLibrary.channelDescriptor)",
         "--event-stream-version", "0"]
  }

  /// The variables the bundle's library is run with, as `swift test` runs it: `NO_COLOR=1`
  /// for Swift Testing.
  var environment: [String: String] {
    if case .swiftTesting = self { ["NO_COLOR": "1"] } else { [:] }
  }

  /// `text` with every character a regular expression gives a meaning to escaped.
  static func escaped(_ text: String) -> String {
    String(text.flatMap { "\\^$.|?*+()[]{}".contains($0) ? ["\\", $0] : [$0] })
  }

  /// Reads one record of the channel (a line without its newline). A line that is not a
  /// record says nothing.
  mutating func read(_ line: ArraySlice<UInt8>) -> [BundleNote] {
    if line.starts(with: Self.scheduleRecord) || line.starts(with: Self.stuckRecord) || line.starts(with: Self.stepRecord) {
      return Self.scheduleNote(line).map { [$0] } ?? []
    }
    if line.starts(with: Self.childrenRecord) {
      guard let value = JSONValue.parse(line), let record = try? JSONFields(value),
        let processes = try? record.array("processes", { value, _ in
          guard case .string(let text) = value else { throw EventDecodingError(reason: "a process is not a string") }
          return text
        })
      else { return [] }
      return [.leftProcesses(processes)]
    }
    switch self {
    case .xctest(var told):
      defer { self = .xctest(told: told) }
      guard let value = JSONValue.parse(line), let record = try? JSONFields(value),
        let kind = try? record.string("record")
      else { return [] }
      if let name = try? record.string("class") {
        return kind == "classStarted" ? [.classStarted(name)] : kind == "classEnded" ? [.classEnded(name)] : []
      }
      guard let test = try? record.string("test") else { return [] }
      switch kind {
      case "started":
        told[test] = []
        return [.started(test)]
      case "issue":
        let issue = Self.issue(record, of: test)
        told[test, default: []].append(issue)
        return [.issue(test, issue)]
      case "ended":
        let outcome = (try? record.string("outcome")) ?? "failed"
        let seconds = try? record.number("duration", as: Double.self)
        let issues = told.removeValue(forKey: test) ?? []
        if outcome == "skipped" { return [.ended(test, skipReason: (try? record.string("skipReason")) ?? "", seconds: seconds)] }
        // The verdict is XCTest's: failures it counted and never told of fail the test too.
        let untold = Issue.untoldByXCTest(
          counted: (try? record.number("failures", as: Int.self)) ?? 0,
          unexpected: (try? record.number("unexpected", as: Int.self)) ?? 0, failed: outcome == "failed", told: issues)
        return (untold.map { [.issue(test, $0)] } ?? []) + [.ended(test, skipReason: nil, seconds: seconds)]
      default:
        return []
      }
    case .swiftTesting(var decoder):
      defer { self = .swiftTesting(decoder) }
      guard let record = try? SwiftTestingRecord(line: line), let event = decoder.read(record) else { return [] }
      switch event {
      case .started(let id): return [.started(id)]
      case .skipped(let id, let reason): return [.started(id), .ended(id, skipReason: reason ?? "", seconds: 0)]
      case .issue(let id, let issue): return [.issue(id, issue)]
      case .issueOfNoTest(let issue): return [.issueOfNoTest(issue)]
      // A test that cancelled itself ends skipped (the decoder's reason), as Swift Testing
      // reports it ("was cancelled").
      case .ended(let id, let skipReason): return [.ended(id, skipReason: skipReason, seconds: nil)]
      case .declared, .runStarted, .runEnded, .cancelled: return []
      }
    }
  }

  /// How the preloaded library's records of the children a test left, of a schedule's steps
  /// and of a stuck test start.
  private static let childrenRecord = Array(#"{"record":"children""#.utf8)
  private static let scheduleRecord = Array(#"{"record":"schedule""#.utf8)
  private static let stuckRecord = Array(#"{"record":"stuck""#.utf8)
  private static let stepRecord = Array(#"{"record":"step""#.utf8)

  /// The note of a `schedule`, `step` or `stuck` record (AsyncHarnessBundleExplorer.swift).
  private static func scheduleNote(_ line: ArraySlice<UInt8>) -> BundleNote? {
    guard let value = JSONValue.parse(line), let record = try? JSONFields(value) else { return nil }
    if let nanoseconds = try? record.number("virtualTime", as: Int64.self) {
      guard let number = try? record.number("step", as: Int.self), let ran = try? record.string("ran") else {
        return .stuck(virtualTime: .nanoseconds(nanoseconds))
      }
      return .step(number, ran: ran, virtualTime: .nanoseconds(nanoseconds))
    }
    guard let steps = try? record.number("steps", as: Int.self), let hashText = try? record.string("hash"),
      let hash = UInt64(hashText, radix: 16), let jobs = try? record.number("jobs", as: Int.self),
      let outside = try? record.number("outside", as: Int.self)
    else { return nil }
    let firstOutside = try? record.number("firstOutsideStep", as: Int.self)
    return .schedule(ScheduleTrace(steps: steps, hash: hash, firstOutsideStep: firstOutside), jobs: jobs, outside: outside,
                     escapedAt: try? record.number("escapedAt", as: Int.self),
                     hookedAt: try? record.number("hookedAt", as: Int.self))
  }

  /// An XCTest failure as an issue: a thrown error at the test, an assertion at its file and
  /// line (the file's module is the test's, `Module` of `Module.Class/method`).
  private static func issue(_ record: JSONFields, of test: String) -> Issue {
    let message = (try? record.string("message")) ?? "a failure"
    if record.optional("thrown") != nil {
      return Issue(kind: .errorThrown, message: message, sourceLocation: nil)
    }
    guard let file = try? record.string("file") else {
      return Issue(kind: .expectationFailed, message: message, sourceLocation: nil)
    }
    let module = test.prefix { $0 != "." && $0 != "/" }
    let name = file.split(separator: "/").last.map(String.init) ?? file
    return Issue(kind: .expectationFailed, message: message, sourceLocation: SourceLocation(
      fileID: "\(module)/\(name)", filePath: file, line: (try? record.number("line", as: Int.self)) ?? 0, column: 1))
  }
}
