import Foundation

/// The Swift Testing listing of a test bundle, running beside the XCTest one: its event
/// stream goes into a file of its own; its other output, read once the XCTest listing ended,
/// waits in its pipe meanwhile.
struct SwiftTestingListing {
  let bundle: String
  let stream = FileManager.default.temporaryDirectory.appendingPathComponent("harness-list-\(UUID().uuidString).jsonl")
  /// What the preloaded library says the bundle declares, when it is preloaded.
  let declarations: URL?
  /// The listing's process; `nil` when it could not start (``failure`` says why).
  private var child: ChildProcess?
  /// Why it could not start, if it could not.
  private var failure: (any Error)?
  /// How long it may run before it is stopped, if at all, when it started, and what stops it.
  private let limit: Duration?
  private let start = ContinuousClock.now
  private var stopping: DispatchWorkItem?

  /// Starts the listing in `directory`, with `library` (the preloaded library) saying which
  /// tests are serialized when given, stopped once it has run `limit` (a listing that hangs).
  init(bundle: String, directory: URL, library: String?, limit: Duration? = nil) {
    self.bundle = bundle
    self.limit = limit
    let declarations = library.map { _ in FileManager.default.temporaryDirectory
      .appendingPathComponent("harness-list-\(UUID().uuidString).declared") }
    self.declarations = declarations
    var environment: [String: String] = [:]
    if let library, let declarations {
      environment = BundleChannelLibrary.listingEnvironment(library: library, output: declarations.path)
    }
    do {
      let child = try ChildProcess(
        executable: bundle, arguments: ["--testing-library", "swift-testing", "--list-tests", "--event-stream-output-path",
                                        stream.path, "--event-stream-version", "0"],
        environment: environment, directory: directory.path, keepsBacktracer: true)
      self.child = child
      stopping = TestBundle.stop(child, after: limit)
    } catch {
      failure = error
    }
  }

  /// The tests listed, once the listing ended; none when the bundle has none (Swift Testing
  /// then exits with status 69, `EX_UNAVAILABLE`: a package of XCTest tests only). When they
  /// cannot be listed, none, and the listing's failure: what it printed, and how it ended.
  func tests(errors: @Sendable (String) -> Void) -> (tests: [ExistingTest], failure: OutsideFailure?) {
    defer {
      for file in [stream] + (declarations.map { [$0] } ?? []) { try? FileManager.default.removeItem(at: file) }
    }
    let command = "--testing-library swift-testing --list-tests"
    guard let child else {
      errors("warning: the Swift Testing tests of \(bundle) cannot be listed: \(failure.map { "\($0)" } ?? "")\n")
      return ([], nil)
    }
    let output = String(decoding: child.readOutputToEnd(), as: UTF8.self)
    let ending = child.waitForExit()
    stopping?.cancel()
    if TestBundle.status(of: ending) == 69 { return ([], nil) }
    guard TestBundle.status(of: ending) == 0 else {
      let stopped = TestBundle.wasStopped(ending, at: limit, since: start)
      return ([], TestBundle.listingFailure(of: bundle, library: .swiftTesting, command: command,
                                            ending: stopped ? nil : ending, limit: limit, output: output))
    }
    do {
      let tests = try ExistingTest.swiftTestingListing(String(decoding: try Data(contentsOf: stream), as: UTF8.self))
      guard let declarations, let declared = try? Data(contentsOf: declarations) else { return (tests, nil) }
      return (ExistingTest.withSerialization(String(decoding: declared, as: UTF8.self), of: tests), nil)
    } catch {
      return ([], TestBundle.listingFailure(of: bundle, library: .swiftTesting, command: command, ending: .exited(0),
                                            output: "its event stream cannot be read: \(error)"))
    }
  }
}
