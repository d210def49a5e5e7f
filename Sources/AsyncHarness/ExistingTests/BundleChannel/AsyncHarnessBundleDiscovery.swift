// What the library `harness test` preloads says of a bundle's Swift Testing tests during their
// listing: each test and suite the bundle declares, and whether it carries `.serialized`
// (`ParallelizationTrait`) itself, which neither the listing nor the event stream says. The
// harness cuts a Swift Testing suite between workers only when it knows that neither the suite
// nor one around it is serialized (Running/LaneBalance.swift).
//
// The tests are found as Swift Testing finds them (its Documentation/ABI/TestContent.md): in
// the `swift5_tests` section of every image the runtime registered
// (`swift_enumerateAllMetadataSections`), each record of kind 'test' an accessor that stores a
// generator of a `Test`, but only when asked for Swift Testing's own type for it (the
// file-private `Test.Generator`). This library declares a record of that kind too, whose
// accessor stores nothing (as an accessor asked for a type it does not make): Swift Testing,
// looking for its tests, calls it with that type, which the discovery then asks the bundle's
// records for, once it checked that the type is a `RawRepresentable` whose raw value is a
// generator. Anything not so (another layout, no Testing, a generator that does not end) says
// nothing, and the harness then cuts no Swift Testing suite.
#if os(Linux) && canImport(Testing) && compiler(>=6.3)
import Dispatch
import Glibc
import SwiftShims
import Synchronization
import Testing

/// This library's test content record: asked for a test, it stores none.
@used @section("swift5_tests")
private let discoveryRecord: (kind: UInt32, reserved1: UInt32, accessor: BundleDiscovery.Accessor, context: UInt, reserved2: UInt) = (
  0x7465_7374, 0, { _, type, _, _ in BundleDiscovery.asked(for: type) }, 0, 0
)

enum BundleDiscovery {
  /// Where to write what the bundle declares, in a listing (`ASYNC_HARNESS_BUNDLE_DISCOVERY`),
  /// until it is written.
  static let output = Mutex<String?>(nil)
  /// A test content record's kind for a test or suite: 'test'.
  static let testKind: UInt32 = 0x7465_7374
  /// How long the generators may take in all before the discovery gives up.
  static let patience = DispatchTimeInterval.seconds(2)

  typealias Generator = @Sendable () async -> Test
  typealias Accessor = @convention(c) (UnsafeMutableRawPointer, UnsafeRawPointer, UnsafeRawPointer?, UInt) -> CBool
  /// A test content record, as TestContent.md lays it out (a record of no accessor is none).
  typealias Record = (kind: UInt32, reserved1: UInt32, accessor: Accessor?, context: UInt, reserved2: UInt)

  /// Swift Testing asks this library's record for a test stored as the type at `type`: in a
  /// listing, the first time, the bundle's tests are found with that type and written to
  /// ``output``. Nothing is stored.
  static func asked(for type: UnsafeRawPointer) -> CBool {
    guard let path = output.withLock({ path in defer { path = nil }; return path }) else { return false }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    for record in records(type: type.load(as: Any.Type.self)) {
      writeWhole(record.encoded()[...] + [0x0A], to: descriptor)
    }
    return false
  }

  /// The records of what the bundle declares: one ``ChannelRecord/declared(test:suite:serialized:)``
  /// for each test and suite, then ``ChannelRecord/discovered(tests:)`` with their number; none
  /// when they cannot be known.
  static func records(type: Any.Type) -> [ChannelRecord] {
    guard let type = type as? any RawRepresentable.Type, let tests = generators(of: type).flatMap(generated) else {
      return []
    }
    var seen = Set<String>()
    var records: [ChannelRecord] = []
    for test in tests {
      let id = String(describing: test.id)
      guard seen.insert(id).inserted else { continue }
      records.append(.declared(test: id, suite: test.isSuite, serialized: test.traits.contains { $0 is ParallelizationTrait }))
    }
    return records + [.discovered(tests: records.count)]
  }

  /// The generator of every 'test' record but this library's, stored as `G`; `nil` unless
  /// `G`'s raw value is a generator.
  private static func generators<G: RawRepresentable>(of _: G.Type) -> [Generator]? {
    guard G.RawValue.self == Generator.self else { return nil }
    var generators: [Generator] = []
    let own = unsafeBitCast(discoveryRecord.accessor, to: UnsafeRawPointer?.self)
    for section in testSections() {
      let stride = MemoryLayout<Record>.stride
      for offset in Swift.stride(from: 0, to: section.count - stride + 1, by: stride) {
        let record = section.load(fromByteOffset: offset, as: Record.self)
        guard record.kind == testKind, let accessor = record.accessor,
          unsafeBitCast(accessor, to: UnsafeRawPointer.self) != own
        else { continue }
        let stored = withUnsafeTemporaryAllocation(of: G.self, capacity: 1) { buffer -> G? in
          let type: Any.Type = G.self
          let done = withUnsafePointer(to: type) { accessor(buffer.baseAddress!, UnsafeRawPointer($0), nil, 0) }
          return done ? buffer.baseAddress!.move() : nil
        }
        if let generator = stored?.rawValue as? Generator { generators.append(generator) }
      }
    }
    return generators
  }

  /// The `swift5_tests` section of every image the runtime registered.
  private static func testSections() -> [UnsafeRawBufferPointer] {
    typealias Visit = @convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer?) -> Bool
    typealias Enumerate = @convention(c) (Visit, UnsafeMutableRawPointer?) -> Void
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "swift_enumerateAllMetadataSections") else { return [] }
    var sections: [UnsafeRawBufferPointer] = []
    withUnsafeMutablePointer(to: &sections) { sections in
      unsafeBitCast(symbol, to: Enumerate.self)({ metadata, context in
        // Version 4 of the structure added the section of tests.
        guard metadata.load(as: UInt.self) >= 4, let context else { return true }
        let range = metadata.load(as: MetadataSections.self).swift5_tests
        if let start = UnsafeRawPointer(bitPattern: range.start), range.length > 0 {
          context.assumingMemoryBound(to: [UnsafeRawBufferPointer].self).pointee
            .append(UnsafeRawBufferPointer(start: start, count: Int(range.length)))
        }
        return true
      }, UnsafeMutableRawPointer(sections))
    }
    return sections
  }

  /// The tests `generators` make, made on this thread (Swift Testing's, which waits for them),
  /// or `nil` when they take longer than ``patience``.
  private static func generated(by generators: [Generator]) -> [Test]? {
    let executor = RoutedTaskExecutor<ThisThread>()
    let made = Mutex<[Test]?>(nil)
    Task(executorPreference: executor) {
      var tests: [Test] = []
      for generator in generators { tests.append(await generator()) }
      made.withLock { [tests] in $0 = tests }
    }
    let deadline = DispatchTime.now() + patience
    while made.withLock({ $0 == nil }) {
      guard ThisThread.runNext(on: executor, before: deadline) else { return nil }
    }
    return made.withLock { $0 }
  }
}

/// Where the jobs of the discovery's task go (Shared/RoutedExecutors.swift): to the thread that
/// asks for them, one at a time, so that the generators, most of which never leave it (one
/// isolated to the main actor goes there and comes back), run without waiting for a thread of
/// the cooperative pool. A sleep, which no generator should take, is the platform's.
private enum ThisThread: JobRoute {
  private static let jobs = Mutex<[UnownedJob]>([])
  private static let arrived = DispatchSemaphore(value: 0)

  static func route(_ job: consuming ExecutorJob, onMainThread: Bool, platform: any Executor) {
    let job = UnownedJob(job)
    jobs.withLock { $0.append(job) }
    arrived.signal()
  }

  static func route<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C,
                              platform: any TaskExecutor) {
    enqueueOnPlatform(job, at: instant, tolerance: tolerance, clock: clock, platform: platform)
  }

  /// Runs the next job on `executor`, once one came; `false` when none came before `deadline`.
  static func runNext(on executor: RoutedTaskExecutor<ThisThread>, before deadline: DispatchTime) -> Bool {
    guard arrived.wait(timeout: deadline) == .success else { return false }
    let job = jobs.withLock { $0.removeFirst() }
    job.runSynchronously(on: executor.asUnownedTaskExecutor())
    return true
  }
}
#endif
