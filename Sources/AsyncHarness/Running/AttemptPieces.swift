/// The one order of an attempt's life, whoever runs it: the suite's `setUp`, the body (unless
/// the set-up threw), the teardown blocks the test registered (last registered first), the
/// suite's `tearDown`; then, when the body ran to its end, the check that every expectation
/// it created was waited for. What a piece throws is recorded at its own source location, and
/// the pieces after it still run.
///
/// Two drivers walk it: on the calling thread (``run(runningAsync:)``: a test run one at a
/// time, whose `async` code its executor drives to its end, turning the main run loop) and
/// in the calling task (``run()``: a test run side by side with others in a worker, and a
/// test body run by a bridge to another testing library).
struct AttemptPieces {
  /// One piece of the test's code.
  enum Piece {
    case blocking(@Sendable () throws -> Void)
    case async(@Sendable () async throws -> Void)
    /// The body the driver is given (``run(body:)``).
    case givenBody
  }

  private enum Stage { case setUp, body, afterBody, teardowns, tearDown, check, over }

  let context: TestContext
  private let setUp: (@Sendable (TestContext) throws -> Void)?
  private let body: Piece
  private let location: SourceLocation
  private let tearDown: (@Sendable (TestContext) throws -> Void)?
  /// Runs once the body returned or threw, before the teardown blocks.
  private let afterBody: (() -> Void)?
  private var stage = Stage.setUp
  private var teardowns: [TestContext.Teardown] = []
  private var bodyRanToEnd = false

  /// The life of `test` of `suite` in `context`.
  init(_ test: Test, of suite: Suite, in context: TestContext) {
    self.context = context
    setUp = suite.setUp
    tearDown = suite.tearDown
    location = test.sourceLocation
    body = switch test.body {
    case .blocking(let body): .blocking { try body(context) }
    case .async(let body): .async { try await body(context) }
    }
    afterBody = nil
  }

  /// The life of a test whose body, declared at `location`, the driver is given
  /// (``run(body:)``), in `context`; `afterBody` runs once the body returned or threw.
  init(bodyAt location: SourceLocation, in context: TestContext, afterBody: @escaping () -> Void) {
    self.context = context
    setUp = nil
    tearDown = nil
    self.location = location
    body = .givenBody
    self.afterBody = afterBody
  }

  /// The next piece to run and where what it throws is recorded, given whether the last piece
  /// ran to its end; `nil` once the life is over (the unwaited expectations were checked then).
  mutating func next(lastRanToEnd: Bool) -> (piece: Piece, location: SourceLocation)? {
    var ranToEnd = lastRanToEnd
    while true {
      switch stage {
      case .setUp:
        stage = .body
        if let setUp { return (.blocking { [context] in try setUp(context) }, location) }
        ranToEnd = true
      case .body:
        stage = .afterBody
        if ranToEnd { return (body, location) }
        ranToEnd = false
      case .afterBody:
        bodyRanToEnd = ranToEnd
        afterBody?()
        teardowns = context.takeTeardowns()
        stage = .teardowns
      case .teardowns:
        guard !teardowns.isEmpty else {
          stage = .tearDown
          continue
        }
        switch teardowns.removeFirst() {
        case .blocking(let block, let location): return (.blocking(block), location)
        case .async(let block, let location): return (.async(block), location)
        }
      case .tearDown:
        stage = .check
        if let tearDown { return (.blocking { [context] in try tearDown(context) }, location) }
      case .check:
        stage = .over
        if bodyRanToEnd { context.recordUnwaitedExpectations() }
      case .over:
        return nil
      }
    }
  }

  /// Runs every piece on the calling thread, each `async` one with `runAsync`, which runs it to
  /// its end and rethrows what it threw.
  mutating func run(runningAsync runAsync: (@escaping @Sendable () async throws -> Void, SourceLocation) throws -> Void) {
    var ranToEnd = true
    while let (piece, location) = next(lastRanToEnd: ranToEnd) {
      do {
        switch piece {
        case .blocking(let work): try work()
        case .async(let work): try runAsync(work, location)
        case .givenBody: break  // a test's life has its own body
        }
        ranToEnd = true
      } catch { ranToEnd = recordThrown(error, at: location) }
    }
  }

  /// Runs every piece in the calling task, `body` as the body of a life made without one.
  mutating func run(body: (TestContext) async throws -> Void = { _ in }) async {
    var ranToEnd = true
    while let (piece, location) = next(lastRanToEnd: ranToEnd) {
      do {
        switch piece {
        case .blocking(let work): try work()
        case .async(let work): try await work()
        case .givenBody: try await body(context)
        }
        ranToEnd = true
      } catch { ranToEnd = recordThrown(error, at: location) }
    }
  }

  /// Records what a piece threw; false: it did not run to its end.
  private func recordThrown(_ error: any Error, at location: SourceLocation) -> Bool {
    context.recordThrown(error, at: location)
    return false
  }
}
