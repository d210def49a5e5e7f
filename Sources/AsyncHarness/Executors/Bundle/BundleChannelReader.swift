import AsyncHarnessShared
import Foundation

/// What one record of a test bundle's channel says about the tests it runs, whichever
/// testing library runs them.
enum BundleNote: Equatable {
  /// A test began, by its ID as the bundle lists it (``ExistingTest/id``), at the time its
  /// library said (Swift Testing's records say it; XCTest's do not).
  case started(String, at: Date? = nil)
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
  /// A record of the library that the harness refused (``ChannelRecordError``), in these words.
  case refused(String)
}

/// How the records a testing library writes on a test bundle's private channel are read
/// (how the bundle is started for it: ``BundleInvocation``). The channel is a pipe handed
/// over as descriptor 3; the preloaded library (``BundleChannelLibrary``) moves it out of the
/// tests' reach and writes each record there whole, just after a numbered marker line on the
/// bundle's standard output (``MarkedOutput``). The tests' standard output and standard error
/// are only their output, and nothing they print is read as the library's words.
///
/// - XCTest: the library's observer writes a record for each test's start, each failure (its
///   file and line, or a thrown error), and its end with XCTest's own outcome. The verdict is
///   XCTest's: a test XCTest failed without telling its observers of a failure still fails.
/// - Swift Testing: Swift Testing's own event stream (``SwiftTestingRecord``), each record
///   written on the thread that posts its event.
enum BundleChannelReader {
  /// An XCTest worker's reader: the issues the observer told so far of each test running (a
  /// test may run XCTest tests of its own inside it).
  case xctest(told: [String: [Issue]])
  /// A Swift Testing worker's reader: the one decoder of Swift Testing's records
  /// (``SwiftTestingDecoder``), which `harness-junit` reads a stream with too, and when each
  /// test running started, by the record's own time (seconds since 1970): a test's seconds
  /// are its end's time less its start's.
  case swiftTesting(SwiftTestingDecoder, started: [String: Double])

  /// A reader for `library`'s records.
  init(_ library: TestLibrary) {
    self = library == .xctest ? .xctest(told: [:]) : .swiftTesting(SwiftTestingDecoder(), started: [:])
  }

  /// The library whose records it reads.
  var library: TestLibrary {
    if case .xctest = self { .xctest } else { .swiftTesting }
  }

  /// Reads one line of the channel (without its newline): a record of the preloaded library
  /// (``ChannelRecord``, read by its one decoder), else, from a Swift Testing bundle, one of
  /// Swift Testing's own. A record the decoder refuses (another version, an unknown kind, a
  /// malformed one) is said as refused, by name; any other line says nothing.
  mutating func read(_ line: ArraySlice<UInt8>) -> [BundleNote] {
    let record: ChannelRecord
    do throws(ChannelRecordError) {
      record = try ChannelRecord(decoding: line)
    } catch .notARecord {
      return readSwiftTesting(line)
    } catch {
      let shown = String(decoding: line.prefix(Self.refusedLineShown), as: UTF8.self)
      return [.refused("The library the harness preloaded into the test bundle sent \(error); the harness refuses it, and "
        + "what it said of the bundle's tests is lost: \(shown)\(line.count > Self.refusedLineShown ? "…" : "")")]
    }
    switch record {
    case .declared, .discovered:
      return [.refused("The library the harness preloaded into the test bundle sent a record of a listing to a worker; the "
        + "harness refuses it: \(String(decoding: line.prefix(Self.refusedLineShown), as: UTF8.self))")]
    case .children(let processes):
      return [.leftProcesses(processes)]
    case .schedule(let steps, let hash, let jobs, let outside, let firstOutsideStep, let escapedAt, let hookedAt):
      return [.schedule(ScheduleTrace(steps: steps, hash: hash, firstOutsideStep: firstOutsideStep), jobs: jobs, outside: outside,
                        escapedAt: escapedAt, hookedAt: hookedAt)]
    case .step(let number, let ran, let virtualTime):
      return [.step(number, ran: ran, virtualTime: .nanoseconds(virtualTime))]
    case .stuck(let virtualTime):
      return [.stuck(virtualTime: .nanoseconds(virtualTime))]
    case .classStarted(let name):
      return [.classStarted(name)]
    case .classEnded(let name):
      return [.classEnded(name)]
    case .started(let test):
      guard case .xctest(var told) = self else { return [] }
      told[test] = []
      self = .xctest(told: told)
      return [.started(test)]
    case .issue(let test, let message, let place):
      guard case .xctest(var told) = self else { return [] }
      let issue = Self.issue(message, at: place, of: test)
      told[test, default: []].append(issue)
      self = .xctest(told: told)
      return [.issue(test, issue)]
    case .ended(let test, let outcome, let seconds, let failures, let unexpected):
      guard case .xctest(var told) = self else { return [] }
      let issues = told.removeValue(forKey: test) ?? []
      self = .xctest(told: told)
      if case .skipped(let reason) = outcome { return [.ended(test, skipReason: reason, seconds: seconds)] }
      // The verdict is XCTest's: failures it counted and never told of fail the test too.
      let untold = Issue.untoldByXCTest(counted: failures, unexpected: unexpected, failed: outcome == .failed, told: issues)
      return (untold.map { [.issue(test, $0)] } ?? []) + [.ended(test, skipReason: nil, seconds: seconds)]
    }
  }

  /// How many bytes of a refused record its refusal shows.
  private static let refusedLineShown = 200

  /// Reads a line of Swift Testing's own event stream; nothing from an XCTest bundle.
  private mutating func readSwiftTesting(_ line: ArraySlice<UInt8>) -> [BundleNote] {
    guard case .swiftTesting(var decoder, var started) = self else { return [] }
    defer { self = .swiftTesting(decoder, started: started) }
    guard let record = try? SwiftTestingRecord(line: line), let event = decoder.read(record) else { return [] }
    let time = record.payload.instant?.since1970
    switch event {
    case .started(let id):
      started[id] = time
      return [.started(id, at: time.map(Date.init(timeIntervalSince1970:)))]
    case .skipped(let id, let reason): return [.started(id), .ended(id, skipReason: reason ?? "", seconds: 0)]
    case .issue(let id, let issue): return [.issue(id, issue)]
    case .issueOfNoTest(let issue): return [.issueOfNoTest(issue)]
    // A test that cancelled itself ends skipped (the decoder's reason), as Swift Testing
    // reports it ("was cancelled").
    case .ended(let id, let skipReason):
      let start = started.removeValue(forKey: id)
      let seconds = start.flatMap { start in time.map { max(0, $0 - start) } }
      return [.ended(id, skipReason: skipReason, seconds: seconds)]
    case .declared, .runStarted, .runEnded, .cancelled: return []
    }
  }

  /// An XCTest failure as an issue: a thrown error at the test, an assertion at its file and
  /// line (the file's module is the test's, `Module` of `Module.Class/method`).
  private static func issue(_ message: String, at place: ChannelRecord.IssuePlace, of test: String) -> Issue {
    switch place {
    case .thrown:
      return Issue(kind: .errorThrown, message: message, sourceLocation: nil)
    case .unknown:
      return Issue(kind: .expectationFailed, message: message, sourceLocation: nil)
    case .file(let file, let line):
      let module = test.prefix { $0 != "." && $0 != "/" }
      let name = file.split(separator: "/").last.map(String.init) ?? file
      return Issue(kind: .expectationFailed, message: message, sourceLocation: SourceLocation(
        fileID: "\(module)/\(name)", filePath: file, line: line, column: 1))
    }
  }
}
