import Foundation

/// The Swift Testing listing of a test bundle, running beside the XCTest one: its event
/// stream and its other output go into files of their own, so nothing waits on a pipe.
struct SwiftTestingListing {
  let bundle: String
  let stream = FileManager.default.temporaryDirectory.appendingPathComponent("harness-list-\(UUID().uuidString).jsonl")
  let log = FileManager.default.temporaryDirectory.appendingPathComponent("harness-list-\(UUID().uuidString).log")
  /// What the preloaded library says the bundle declares, when it is preloaded.
  let declarations: URL?
  let process = Process()
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
    process.executableURL = URL(fileURLWithPath: bundle)
    process.currentDirectoryURL = directory
    let declarations = library.map { _ in FileManager.default.temporaryDirectory
      .appendingPathComponent("harness-list-\(UUID().uuidString).declared") }
    self.declarations = declarations
    if let library, let declarations {
      process.environment = ProcessInfo.processInfo.environment
        .merging(BundleChannelLibrary.listingEnvironment(library: library, output: declarations.path)) { $1 }
    }
    process.arguments = ["--testing-library", "swift-testing", "--list-tests", "--event-stream-output-path", stream.path,
                         "--event-stream-version", "0"]
    do {
      guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
        throw UsageError("cannot create \(log.path)")
      }
      let output = try FileHandle(forWritingTo: log)
      defer { try? output.close() }
      process.standardOutput = output
      process.standardError = output
      try process.run()
      stopping = TestBundle.stop(process, after: limit)
    } catch {
      failure = error
    }
  }

  /// The tests listed, once the listing ended; none when the bundle has none (Swift Testing
  /// then exits with status 69, `EX_UNAVAILABLE`: a package of XCTest tests only). When they
  /// cannot be listed, none, and the listing's failure: what it printed, and how it ended.
  func tests(errors: @Sendable (String) -> Void) -> (tests: [ExistingTest], failure: OutsideFailure?) {
    defer {
      for file in [stream, log] + (declarations.map { [$0] } ?? []) { try? FileManager.default.removeItem(at: file) }
    }
    let command = "--testing-library swift-testing --list-tests"
    if let failure {
      errors("warning: the Swift Testing tests of \(bundle) cannot be listed: \(failure)\n")
      return ([], nil)
    }
    process.waitUntilExit()
    stopping?.cancel()
    if TestBundle.status(of: process) == 69 { return ([], nil) }
    let output = String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self)
    guard TestBundle.status(of: process) == 0 else {
      let stopped = TestBundle.wasStopped(process, at: limit, since: start)
      return ([], TestBundle.listingFailure(of: bundle, library: .swiftTesting, command: command,
                                            ending: stopped ? nil : TestBundle.processEnding(of: process), limit: limit,
                                            output: output))
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
