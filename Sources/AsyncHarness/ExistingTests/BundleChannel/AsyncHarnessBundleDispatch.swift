// Dispatch under a schedule, in the library `harness test` preloads into a package's test
// bundle (see AsyncHarnessBundleExplorer.swift): the blocks the schedule's work sends to
// Dispatch (`dispatch_async`, `dispatch_barrier_async`, `dispatch_group_async`,
// `dispatch_after`, interposed here) are jobs of the schedule, taken by their address.
#if os(Linux) && compiler(>=6.3)
import Dispatch
import Glibc
import Synchronization

extension ExplorerScheduler {
  /// Takes a block a test's scheduled work sent to Dispatch (`dispatch_async`,
  /// `dispatch_barrier_async`, `dispatch_group_async`, `dispatch_after`), to run when the
  /// schedule picks it, on its queue; `false` when the schedule does not take it (another
  /// thread sent it, no test runs, the schedule gave its jobs back, a time of another clock):
  /// Dispatch runs it then as it would.
  func submit(_ sent: SentBlock, delay: Int64? = nil) -> Bool {
    // Only the work the schedule runs sends blocks it takes: a test's Swift concurrency, the
    // blocks it runs. What another thread sends (a synchronous XCTest body, the testing
    // library, a thread of the test's own) is Dispatch's, as it is outside the schedule.
    guard Self.ownThread.isSet, ExecutorHooks.installed == false else { return false }
    let wakeUp = state.withLock { state -> Bool? in
      guard state.escapedAt == nil, state.jobsAtTestStart != nil else { return nil }
      state.jobs += 1
      let onMain = sent.queue == RealDispatch.mainQueue
      let job = Job(work: .dispatch(sent), onMainThread: onMain, queue: state.queue(ofDispatchQueue: sent.queue),
                    label: "a Dispatch block on \(onMain ? "the main queue" : RealDispatch.label(of: sent.queue))")
      state.take(job, delay: delay)
      defer { state.idle = false }
      return state.idle
    }
    guard let wakeUp else { return false }
    if let group = sent.group { RealDispatch.groupEnter?(group) }
    if wakeUp { wake.signal() }
    return true
  }

  /// Before `dispatch_sync` onto the queue at `address`: the blocks sent to it and not run
  /// yet run first, here, in the order sent (a serial queue's order), so the synchronous
  /// block never jumps ahead of them.
  func drainBlocks(sentTo address: UInt) {
    guard !RealDispatch.globalQueues.contains(address) else { return }
    let held = state.withLock { state -> [SentBlock] in
      guard let queue = state.dispatchQueues[address] else { return [] }
      let held = state.ready.filter { $0.queue == queue }
      state.ready.removeAll { $0.queue == queue }
      return held.compactMap { if case .dispatch(let sent) = $0.work { sent } else { nil } }
    }
    for sent in held { sent.runOnItsQueue() }
  }

}

extension ExplorerScheduler.State {
    /// The schedule's queue of a block sent to the Dispatch queue at `address`: that queue's
    /// own, in the order sent, unless it is one of Dispatch's concurrent global queues, whose
    /// blocks may run in any order: then a queue of its own.
    mutating func queue(ofDispatchQueue address: UInt) -> Int {
      if RealDispatch.globalQueues.contains(address) { return queue(of: nil) }
      if let known = dispatchQueues[address] { return known }
      let index = queue(of: nil)
      dispatchQueues[address] = index
      return index
    }

}

/// A block a test sent to Dispatch, which the schedule runs on its queue when it picks it: the
/// queue (its address), whether it was sent as a barrier, and the group it belongs to, which
/// was entered as it was sent and is left once it ran.
final class SentBlock: @unchecked Sendable {
  let queue: UInt
  /// The block, copied to the heap (a caller in C may send a block of its stack, which
  /// Dispatch copies as it takes it): released with the last reference to this.
  private let copied: UnsafeRawPointer
  let barrier: Bool
  let group: OpaquePointer?

  init(queue: OpaquePointer?, block: UnsafeRawPointer, barrier: Bool = false, group: OpaquePointer? = nil) {
    self.queue = UInt(bitPattern: queue)
    copied = Blocks.copy(block)
    self.barrier = barrier
    self.group = group
    // Kept alive while the block waits, as Dispatch keeps them for a block it holds.
    RealDispatch.retain?(queue)
    if let group { RealDispatch.retain?(group) }
  }

  deinit {
    Blocks.release(copied)
    RealDispatch.release?(OpaquePointer(bitPattern: queue))
    if let group { RealDispatch.release?(group) }
  }

  /// Runs the block here: what it sends is the schedule's own work; then its group is left
  /// and `then` called.
  func run(then: (@Sendable () -> Void)?) {
    ExplorerScheduler.ownThread.set()
    Blocks.invoke(copied)
    ExplorerScheduler.ownThread.clear()
    if let group { RealDispatch.groupLeave?(group) }
    then?()
  }

  /// Runs it on its queue from this thread (`dispatch_sync_f`, as a barrier when it was sent
  /// as one): Dispatch runs it here, without a hand-off to another thread and back.
  func runOnItsQueue() {
    let context = Unmanaged.passUnretained(self).toOpaque()
    let work: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
      Unmanaged<SentBlock>.fromOpaque(context!).takeUnretainedValue().run(then: nil)
    }
    if barrier {
      RealDispatch.barrierSyncFunction?(OpaquePointer(bitPattern: queue), context, work)
    } else {
      RealDispatch.syncFunction?(OpaquePointer(bitPattern: queue), context, work)
    }
  }

  /// Sends it to its queue (after `delay` nanoseconds when given, as a barrier when it was
  /// sent as one), through Dispatch's function-and-context calls: Swift makes no block of it.
  func send(after delay: Int64?, then: (@Sendable () -> Void)?) {
    let queue = OpaquePointer(bitPattern: self.queue)
    let context = Unmanaged.passRetained(Sending(self, then: then)).toOpaque()
    let work: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
      let sending = Unmanaged<Sending>.fromOpaque(context!).takeRetainedValue()
      sending.sent.run(then: sending.then)
    }
    if let delay, let when = RealDispatch.time?(0, delay) {
      RealDispatch.afterFunction?(when, queue, context, work)
    } else if barrier {
      RealDispatch.barrierAsyncFunction?(queue, context, work)
    } else {
      RealDispatch.asyncFunction?(queue, context, work)
    }
  }

  /// A block on its way, with what is called once it ran.
  private final class Sending {
    let sent: SentBlock
    let then: (@Sendable () -> Void)?
    init(_ sent: SentBlock, then: (@Sendable () -> Void)?) {
      self.sent = sent
      self.then = then
    }
  }
}

/// The blocks runtime's copy, release and call, by hand, on a block's address: a block a
/// caller in C sends may live on its stack, and Swift, handed one, neither copies it nor passes
/// a block of its own to a C function pointer safely on Linux; the library never converts a
/// block to a Swift closure or back.
enum Blocks {
  private typealias Copy = @convention(c) (UnsafeRawPointer?) -> UnsafeRawPointer?
  private typealias Release = @convention(c) (UnsafeRawPointer?) -> Void
  private static let copyFunction = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_Block_copy")
    .map { unsafeBitCast($0, to: Copy.self) }
  private static let releaseFunction = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_Block_release")
    .map { unsafeBitCast($0, to: Release.self) }

  /// `block` copied to the heap (retained, when it is there already).
  static func copy(_ block: UnsafeRawPointer) -> UnsafeRawPointer {
    copyFunction?(block) ?? block
  }

  static func release(_ block: UnsafeRawPointer) { releaseFunction?(block) }

  /// Calls a block: its function (at offset 16, after its isa, flags and reserved fields)
  /// with the block itself, as the blocks ABI does.
  static func invoke(_ block: UnsafeRawPointer) {
    block.load(fromByteOffset: 16, as: (@convention(c) (UnsafeRawPointer) -> Void).self)(block)
  }
}

/// Libdispatch's own functions, found past this library, and the queues the schedule knows:
/// the main queue, and the concurrent global ones.
enum RealDispatch {
  typealias QueueBlock = @convention(c) (OpaquePointer?, UnsafeRawPointer) -> Void
  typealias TimeQueueBlock = @convention(c) (UInt64, OpaquePointer?, UnsafeRawPointer) -> Void
  typealias GroupQueueBlock = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeRawPointer) -> Void
  /// A call on a Dispatch object: a group's enter and leave, an object's retain and release.
  typealias GroupCall = @convention(c) (OpaquePointer?) -> Void
  typealias GlobalQueue = @convention(c) (Int, UInt) -> OpaquePointer?
  typealias Time = @convention(c) (UInt64, Int64) -> UInt64
  typealias Label = @convention(c) (OpaquePointer?) -> UnsafePointer<CChar>?
  typealias Work = @convention(c) (UnsafeMutableRawPointer?) -> Void
  typealias QueueWork = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Work) -> Void
  typealias TimeQueueWork = @convention(c) (UInt64, OpaquePointer?, UnsafeMutableRawPointer?, Work) -> Void

  // Each cast where its type is known: a C function pointer passed through a generic
  // parameter is not one any more.
  static let async = next("dispatch_async").map { unsafeBitCast($0, to: QueueBlock.self) }
  static let barrierAsync = next("dispatch_barrier_async").map { unsafeBitCast($0, to: QueueBlock.self) }
  static let sync = next("dispatch_sync").map { unsafeBitCast($0, to: QueueBlock.self) }
  static let barrierSync = next("dispatch_barrier_sync").map { unsafeBitCast($0, to: QueueBlock.self) }
  static let after = next("dispatch_after").map { unsafeBitCast($0, to: TimeQueueBlock.self) }
  static let groupAsync = next("dispatch_group_async").map { unsafeBitCast($0, to: GroupQueueBlock.self) }
  static let groupEnter = next("dispatch_group_enter").map { unsafeBitCast($0, to: GroupCall.self) }
  static let groupLeave = next("dispatch_group_leave").map { unsafeBitCast($0, to: GroupCall.self) }
  static let retain = next("dispatch_retain").map { unsafeBitCast($0, to: GroupCall.self) }
  static let release = next("dispatch_release").map { unsafeBitCast($0, to: GroupCall.self) }
  static let time = next("dispatch_time").map { unsafeBitCast($0, to: Time.self) }
  static let asyncFunction = next("dispatch_async_f").map { unsafeBitCast($0, to: QueueWork.self) }
  static let barrierAsyncFunction = next("dispatch_barrier_async_f").map { unsafeBitCast($0, to: QueueWork.self) }
  static let syncFunction = next("dispatch_sync_f").map { unsafeBitCast($0, to: QueueWork.self) }
  static let barrierSyncFunction = next("dispatch_barrier_sync_f").map { unsafeBitCast($0, to: QueueWork.self) }
  static let afterFunction = next("dispatch_after_f").map { unsafeBitCast($0, to: TimeQueueWork.self) }
  private static let queueLabel = next("dispatch_queue_get_label").map { unsafeBitCast($0, to: Label.self) }
  /// The main queue's address.
  static let mainQueue = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_dispatch_main_q").map { UInt(bitPattern: $0) } ?? 0
  /// The global queues' addresses, of every quality of service and priority.
  static let globalQueues: Set<UInt> = {
    guard let get = next("dispatch_get_global_queue").map({ unsafeBitCast($0, to: GlobalQueue.self) }) else { return [] }
    return Set([0x21, 0x19, 0x15, 0x11, 0x09, 2, 0, -2, Int(Int16.min)].compactMap { get($0, 0) }.map { UInt(bitPattern: $0) })
  }()

  /// The address of the function `name` of the library loaded after this one (libdispatch's).
  private static func next(_ name: String) -> UnsafeMutableRawPointer? {
    dlsym(UnsafeMutableRawPointer(bitPattern: -1), name)
  }

  /// `a queue's label`, as Dispatch gives it, or its address.
  static func label(of queue: UInt) -> String {
    guard let label = queueLabel?(OpaquePointer(bitPattern: queue)).map({ String(cString: $0) }), !label.isEmpty else {
      return "queue 0x\(String(queue, radix: 16))"
    }
    return label
  }

  /// The nanoseconds from now until `when` (a `dispatch_time_t` of the uptime clock); `nil`
  /// for a time of another clock, or forever.
  static func delay(until when: UInt64) -> Int64? {
    guard when >> 62 == 0, let now = time?(0, 0) else { return nil }
    return when > now ? Int64(when - now) : 0
  }

  /// Runs `body` on the main queue, past the schedule: the explorer's own use of Dispatch.
  static func onMain(_ body: @escaping @Sendable () -> Void) {
    final class Body {
      let run: @Sendable () -> Void
      init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
    asyncFunction?(OpaquePointer(bitPattern: mainQueue), Unmanaged.passRetained(Body(body)).toOpaque()) { context in
      Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
    }
  }
}

/// `dispatch_async`, as this process calls it: a block a test sends is the schedule's to run.
/// (A block is taken by its address: the library never makes a Swift closure of it.)
@_cdecl("dispatch_async")
public func asyncHarnessDispatchAsync(_ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  if BundleExplorer.scheduler?.submit(SentBlock(queue: queue, block: block)) != true { RealDispatch.async?(queue, block) }
}

/// `dispatch_barrier_async`, as this process calls it.
@_cdecl("dispatch_barrier_async")
public func asyncHarnessDispatchBarrierAsync(_ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  if BundleExplorer.scheduler?.submit(SentBlock(queue: queue, block: block, barrier: true)) != true {
    RealDispatch.barrierAsync?(queue, block)
  }
}

/// `dispatch_group_async`, as this process calls it: the group is entered as the block is sent.
@_cdecl("dispatch_group_async")
public func asyncHarnessDispatchGroupAsync(_ group: OpaquePointer?, _ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  if BundleExplorer.scheduler?.submit(SentBlock(queue: queue, block: block, group: group)) != true {
    RealDispatch.groupAsync?(group, queue, block)
  }
}

/// `dispatch_after`, as this process calls it: a block due later is a sleeper of the schedule.
@_cdecl("dispatch_after")
public func asyncHarnessDispatchAfter(_ when: UInt64, _ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  guard let scheduler = BundleExplorer.scheduler, let delay = RealDispatch.delay(until: when),
    scheduler.submit(SentBlock(queue: queue, block: block), delay: delay)
  else { return RealDispatch.after?(when, queue, block) ?? () }
}

/// `dispatch_sync`, as this process calls it: the blocks sent to the queue before run first.
@_cdecl("dispatch_sync")
public func asyncHarnessDispatchSync(_ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  BundleExplorer.scheduler?.drainBlocks(sentTo: UInt(bitPattern: queue))
  RealDispatch.sync?(queue, block)
}

/// `dispatch_barrier_sync`, as this process calls it.
@_cdecl("dispatch_barrier_sync")
public func asyncHarnessDispatchBarrierSync(_ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  BundleExplorer.scheduler?.drainBlocks(sentTo: UInt(bitPattern: queue))
  RealDispatch.barrierSync?(queue, block)
}
#endif
