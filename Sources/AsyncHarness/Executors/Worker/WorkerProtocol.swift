import Foundation

/// The worker protocol: what a parent and its worker process say to each other on their
/// private channel (``WorkerChannel``), one JSON object a line: requests and replies carry
/// the protocol's ``version``, events the event schema's.
///
/// The parent sends ``WorkerRequest``s: run a test, start one side by side with others,
/// resume after a pause, stop. A test carries a reference (`ref`) unique on its channel, and
/// names its test by its position among the suites the executable declares
/// (``Runner/PlannedTest/Position``), never by its names (two tests may share one), and carries its
/// whole ``TestID``, which the worker checks against the test at that position. The worker
/// answers each test with the test's issues and output as ``Event`` lines, the waits that
/// ended and the schedule steps taken as ``TimelineMark`` lines (when the step asks for
/// them), then one ``WorkerReply``: the test returned (and whether the worker must be
/// retired, ``WorkerRetirement``), or it cannot run. Event
/// lines are the event schema's own (``Event/jsonLine``): they carry its `version`, not the
/// protocol's. Standard output and standard error of the worker are the running
/// test's output; the worker writes a marker line there as each test starts
/// (``WorkerMain/markerVariable``), so the parent can send steps ahead and still tell one
/// test's output from the next's.
enum WorkerProtocol {
  /// The version both sides speak; a line of another version is refused. Version 2: a
  /// `returned` reply says when the worker must be retired (`retire`), instead of the parent
  /// guessing it from the test's issues. Version 3: the `start` request runs an `async` test
  /// side by side with the others the worker runs so. Version 4: a test carries a `ref`, and
  /// its waits and schedule steps travel as ``TimelineMark`` lines naming it. Version 5: a
  /// mark's first member is `mark`, and its durations and virtual times are integer
  /// nanoseconds, so the parent reads it without building a JSON value. Version 7: the test a
  /// `run` or `start` request carries is its `test` field (it was `step`, a word the
  /// schedule's steps keep).
  static let version = 7

  /// Reads one line's object and checks its version.
  static func fields(of line: some Collection<UInt8>) throws -> JSONFields {
    guard let value = JSONValue.parse(line) else { throw EventDecodingError(reason: "not JSON") }
    return try fields(of: value)
  }

  /// Reads an object and checks its version.
  static func fields(of value: JSONValue) throws -> JSONFields {
    let json = try JSONFields(value)
    try check(try json.number("protocol"))
    return json
  }

  /// - Throws: ``EventDecodingError`` when a line's `version` is not this build's.
  static func check(_ version: Int) throws {
    guard version == Self.version else {
      throw EventDecodingError(reason: "worker protocol version \(version); this build speaks version \(Self.version)")
    }
  }
}

/// What a parent asks its worker.
enum WorkerRequest: Sendable, Equatable {
  /// Run this test next.
  case run(WorkerRunRequest)
  /// Start this `async` test now, as a task, side by side with the tests started so that
  /// still run; its reply comes when it ends, in whichever order they end. The worker never
  /// pauses for such a test, and writes no marker line for it (their output cannot be split).
  case start(WorkerRunRequest)
  /// Go on after a pause: the worker pauses after a test that recorded a failure, dropping
  /// the tests it reads until this (the parent may run a retry first instead).
  case resume
  /// Exit: no request follows.
  case stop

  /// The request as one line, newline included.
  var line: [UInt8] {
    var json = JSONText()
    json.object { json in
      switch self {
      case .run(let request):
        json.field("protocol", WorkerProtocol.version)
        json.field("request", "run")
        json.field("test") { $0.runRequest(request) }
      case .start(let request):
        json.field("protocol", WorkerProtocol.version)
        json.field("request", "start")
        json.field("test") { $0.runRequest(request) }
      case .resume:
        json.field("protocol", WorkerProtocol.version)
        json.field("request", "resume")
      case .stop:
        json.field("protocol", WorkerProtocol.version)
        json.field("request", "stop")
      }
    }
    json.newline()
    return json.array
  }

  /// Reads a request line.
  /// - Throws: ``EventDecodingError`` when the line is not a request of this version.
  init(line: some Collection<UInt8>) throws {
    let json = try WorkerProtocol.fields(of: line)
    switch try json.string("request") {
    case "run": self = .run(try WorkerRunRequest(json: json.object("test")))
    case "start": self = .start(try WorkerRunRequest(json: json.object("test")))
    case "resume": self = .resume
    case "stop": self = .stop
    case let other: throw EventDecodingError(reason: "unknown request \"\(other)\"")
    }
  }
}

/// What a `run` request carries: one test of the plan as a worker runs it (where its test
/// is, who it is, its limits), sent in the request's `test` field.
struct WorkerRunRequest: Sendable, Equatable {
  /// Where the test is among the suites the executable declares.
  var position: Runner.PlannedTest.Position
  /// The test's identity, whole: the worker's events carry it.
  var id: TestID
  /// Seconds.
  var defaultTimeout: Double
  /// Seconds, when the test has a limit.
  var timeLimit: Double?
  /// The seed of the delays of the test's real queues (`--jitter`).
  var jitterSeed: UInt64?
  /// Whether the test's waits are reported as they end, and its schedule's steps as they are
  /// taken (`reportsWaits`, sent only when true).
  var reportsWaits: Bool
  /// The test's reference, unique among the tests sent on its channel: the worker's
  /// ``TimelineMark``s for it carry it.
  var ref: Int

  init(_ planned: Runner.PlannedTest, ref: Int) {
    self.ref = ref
    position = planned.position
    id = planned.id
    defaultTimeout = planned.defaultTimeout.timeInterval
    timeLimit = planned.timeLimit?.timeInterval
    jitterSeed = planned.jitter?.seed
    reportsWaits = planned.reportsWaits
  }

  init(json: JSONFields) throws {
    position = Runner.PlannedTest.Position(suite: try json.number("suite"), test: try json.number("test"))
    id = try TestID(json: json.object("id"))
    defaultTimeout = try json.number("defaultTimeout")
    timeLimit = try json.optionalNumber("timeLimit")
    jitterSeed = try json.optionalNumber("jitterSeed")
    ref = try json.number("ref")
    switch json.optional("reportsWaits") {
    case nil: reportsWaits = false
    case .bool(let reports)?: reportsWaits = reports
    default: throw json.wrongType("reportsWaits")
    }
  }
}

/// How a worker ends its answer to a test.
enum WorkerReply: Sendable, Equatable {
  /// The test's code ran to its end in `duration` seconds; its issues came before. When
  /// `paused`, the worker recorded a failure and drops the tests it reads until
  /// ``WorkerRequest/resume``. With `retire`, the worker must not run another test: its
  /// parent stops it and starts a fresh one.
  case returned(TestID, duration: Double, trace: ScheduleTrace?, paused: Bool, retire: WorkerRetirement?)
  /// The worker cannot run the test (it has no test at that position, or another one); it
  /// pauses as after a failure.
  case cannotRun(TestID, reason: String)
  /// The worker is crashing on the task of the test it started side by side under channel
  /// reference `ref` (``CrashNotice``): written from the crash's signal handler, the last
  /// line before the worker ends.
  case crashing(ref: Int)

  /// The reply as one line, newline included.
  var line: [UInt8] {
    var json = JSONText()
    json.object { json in
      switch self {
      case .returned(let id, let duration, let trace, let paused, let retire):
        json.field("duration", duration)
        if let outside = trace?.firstOutsideStep { json.field("firstOutsideStep", outside) }
        json.field("paused") { $0.literal(paused ? "true" : "false") }
        json.field("protocol", WorkerProtocol.version)
        json.field("reply", "returned")
        if let retire { json.field("retire", retire.rawValue) }
        if let trace { json.field("scheduleTrace", trace.description) }
        json.field("test", id)
      case .cannotRun(let id, let reason):
        json.field("protocol", WorkerProtocol.version)
        json.field("reason", reason)
        json.field("reply", "cannotRun")
        json.field("test", id)
      case .crashing(let ref):
        json.field("protocol", WorkerProtocol.version)
        json.field("ref", ref)
        json.field("reply", "crashing")
      }
    }
    json.newline()
    return json.array
  }
}

/// Why a worker must not run another test after the one it replied for: its parent retires
/// it (sends ``WorkerRequest/stop``, stops it after the grace period) and runs the next test
/// in a fresh worker. The worker says it, since only it knows what the test left behind.
enum WorkerRetirement: String, Sendable, Equatable {
  /// The test ran past its time limit (its test record holds its `timeLimitExceeded`
  /// issue). Its `async` code, cancelled at the limit and left running, may hold a thread of
  /// the worker's cooperative pool and starve the `async` tests after it; what a wait that
  /// reached the limit waited for may still hold the worker's threads.
  case exceededTimeLimit
  /// The test left work running that holds the worker's threads: tasks holding every
  /// thread of its cooperative pool, or threads still running (``LeakCheck``).
  case leakedWork
}

/// A line a worker writes on its channel: an event of a test, a mark on a step's timeline, or
/// the reply that ends a test.
enum WorkerMessage: Sendable {
  case event(Event)
  case mark(TimelineMark)
  case reply(WorkerReply)

  /// Reads a line.
  /// - Throws: ``EventDecodingError`` when it is neither an event, nor a mark or a reply of
  ///   this version.
  init(line: some Collection<UInt8>) throws {
    if let mark = try TimelineMark(line: line) {
      self = .mark(mark)
      return
    }
    guard let value = JSONValue.parse(line) else { throw EventDecodingError(reason: "not JSON") }
    let json = try JSONFields(value)
    if json.optional("mark") != nil {
      _ = try WorkerProtocol.fields(of: value)  // a worker of another version says so
      throw EventDecodingError(reason: "a mark's first member is not mark")
    }
    guard json.optional("reply") != nil else {
      self = .event(try Event(json: value))
      return
    }
    let reply = try WorkerProtocol.fields(of: value)
    let kind = try reply.string("reply")
    if kind == "crashing" {
      self = .reply(.crashing(ref: try reply.number("ref")))
      return
    }
    let id = try TestID(json: reply.object("test"))
    switch kind {
    case "returned":
      guard case .bool(let paused) = try reply.required("paused") else { throw reply.wrongType("paused") }
      var trace = try reply.optionalString("scheduleTrace").map { text in
        guard let trace = ScheduleTrace(text) else { throw reply.wrongType("scheduleTrace") }
        return trace
      }
      trace?.firstOutsideStep = try reply.optionalNumber("firstOutsideStep")
      let retire = try reply.optionalString("retire").map { name in
        guard let retire = WorkerRetirement(rawValue: name) else { throw EventDecodingError(reason: "unknown retire \"\(name)\"") }
        return retire
      }
      self = .reply(.returned(id, duration: try reply.number("duration"), trace: trace, paused: paused, retire: retire))
    case "cannotRun":
      self = .reply(.cannotRun(id, reason: try reply.string("reason")))
    case let other:
      throw EventDecodingError(reason: "unknown reply \"\(other)\"")
    }
  }
}

extension JSONText {
  fileprivate mutating func runRequest(_ request: WorkerRunRequest) {
    object { json in
      json.field("defaultTimeout", request.defaultTimeout)
      json.field("id", request.id)
      if let jitterSeed = request.jitterSeed { json.field("jitterSeed", jitterSeed) }
      json.field("ref", request.ref)
      if request.reportsWaits { json.field("reportsWaits") { $0.literal("true") } }
      json.field("suite", request.position.suite)
      json.field("test", request.position.test)
      if let timeLimit = request.timeLimit { json.field("timeLimit", timeLimit) }
    }
  }
}

/// A worker process that cannot be started or cannot do what it was asked.
struct WorkerError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
