// Dispatch under a schedule, in the library `harness test` preloads into a package's test
// bundle (see AsyncHarnessBundleExplorer.swift): the blocks the schedule's work sends to
// Dispatch (`dispatch_async`, `dispatch_barrier_async`, `dispatch_group_async`,
// `dispatch_after`, `dispatch_group_notify`, interposed here) are jobs of the schedule, taken
// by their address; which queues keep which orders is in AsyncHarnessBundleDispatchQueues.swift.
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
  func submit(_ block: @autoclosure () -> SentBlock, delay: Int64? = nil) -> Bool {
    // Only the work the schedule runs sends blocks it takes: a test's Swift concurrency, the
    // blocks it runs. What another thread sends (a synchronous XCTest body on the main thread,
    // the testing library, a thread of the test's own) is Dispatch's, as it is outside the
    // schedule: a synchronous body runs beside its blocks, and tests that pass under `swift
    // test` count on that (taking them failed GRDB's observation tests in every order). But a
    // block the main thread sends for later (XCTest's waiter's timeout) is the schedule's
    // sleeper, due at its real time: while it is due within the hour, the test is not stuck.
    // And what Dispatch sends itself (DispatchIO's blocks) is Dispatch's: see ``DispatchCaller``.
    guard Self.ownThread.isSet || (delay != nil && gettid() == getpid()), ExecutorHooks.installed == false,
      !DispatchCaller.isDispatch
    else { return false }
    let sent = block()
    let wakeUp = state.withLock { state -> Bool? in
      guard state.escapedAt == nil, state.jobsAtTestStart != nil else { return nil }
      if sent.notified != nil {
        // Taken once its group is empty (``State/takeNotifiedBlocks()``).
        state.notices.append(sent)
        return false
      }
      state.take(sent, delay: delay)
      defer { state.idle = false }
      return state.idle
    }
    guard let wakeUp else { return false }
    if let group = sent.group { RealDispatch.groupEnter?(group) }
    if let group = sent.notified {
      // Dispatch says when the group is empty: the schedule then looks at its notices again.
      RealDispatch.groupNotifyFunction?(group, OpaquePointer(bitPattern: RealDispatch.anyGlobalQueue), nil) { _ in
        BundleExplorer.scheduler?.wake.signal()
      }
    }
    if wakeUp { wake.signal() }
    return true
  }

  /// A block was cancelled (`dispatch_block_cancel`): asleep in the schedule, it would run
  /// nothing when due, so it goes back to Dispatch with what is left of its time, and no
  /// longer keeps the test waiting. XCTest cancels its waiter's timeout so as the wait ends.
  func cancelled(_ block: UnsafeRawPointer) {
    let address = UInt(bitPattern: block)
    let handedBack = state.withLock { $0.removeSleepers { $0.sentBlock?.address == address } }
    guard !handedBack.isEmpty else { return }
    for sleeper in handedBack { sleeper.job.sentBlock?.send(after: sleeper.delay, then: nil) }
    // The schedule may sleep until that block was due: it looks at what is left.
    wake.signal()
  }

  /// Before `dispatch_sync` onto the queue at `address`: the blocks sent to it (or to a queue
  /// of the same serial order) and not run yet run first, here, in the order sent, so the
  /// synchronous block never jumps ahead of them.
  func drainBlocks(sentTo address: UInt) {
    guard !RealDispatch.globalQueues.contains(address) else { return }
    let held = state.withLock { $0.ready.removeBlocks(orderedBy: DispatchQueueKinds.order(of: address).root) }
    for sent in held { sent.runOnItsQueue() }
  }

}

extension ExplorerScheduler.Job {
  /// The Dispatch block this job runs, if it runs one.
  var sentBlock: SentBlock? {
    if case .dispatch(let sent) = work { sent } else { nil }
  }
}

extension ExplorerScheduler.State {
  /// Takes a block sent to Dispatch: ready now, or asleep for `delay` nanoseconds.
  mutating func take(_ sent: SentBlock, delay: Int64?) {
    jobs += 1
    let onMain = sent.orderedBy == RealDispatch.mainQueue
    let what = sent.notified == nil ? "a Dispatch block" : "a group's notify block"
    take(ExplorerScheduler.Job(work: .dispatch(sent), onMainThread: onMain, queue: queue(ofDispatchQueue: sent),
                               label: "\(what) on \(onMain ? "the main queue" : RealDispatch.label(of: sent.queue))"),
         delay: delay)
  }

  /// Whether a notify block's group is empty: it may run now.
  var noticeDue: Bool {
    notices.contains { RealDispatch.groupWait?($0.notified, 0) == 0 }
  }

  /// Takes the notify blocks whose group is empty now, in the order they were sent.
  mutating func takeNotifiedBlocks() {
    guard !notices.isEmpty else { return }
    let empty = notices.filter { RealDispatch.groupWait?($0.notified, 0) == 0 }
    notices.removeAll { notice in empty.contains { $0 === notice } }
    for sent in empty { take(sent, delay: nil) }
  }

  /// The schedule's queue of a block sent to a Dispatch queue: a serial queue's own (shared
  /// with the queues that target it), in the order sent; a queue of its own for a block of a concurrent queue (one of the test's, or a
  /// global one), whose blocks may run in any order between its barriers (``ReadyJobs``).
  mutating func queue(ofDispatchQueue sent: SentBlock) -> Int {
    if sent.concurrent { return queue(of: nil) }
    if let known = dispatchQueues[sent.orderedBy] { return known }
    let index = queue(of: nil)
    dispatchQueues[sent.orderedBy] = index
    return index
  }
}

/// A block a test sent to Dispatch, which the schedule runs on its queue when it picks it: the
/// queue (its address), whether the queue runs blocks side by side and whether the block was
/// sent as a barrier; the group it belongs to, which was entered as it was sent and is left
/// once it ran, or the group whose being empty it waits for (a `notify` block).
final class SentBlock: @unchecked Sendable {
  let queue: UInt
  /// The serial queue whose order the block keeps: its queue's, or the last serial queue its
  /// queue targets (a queue targeting a serial one runs its blocks in that one's order).
  let orderedBy: UInt
  /// The block, copied to the heap (a caller in C may send a block of its stack, which
  /// Dispatch copies as it takes it): released with the last reference to this.
  private let copied: UnsafeRawPointer
  let concurrent: Bool
  let barrier: Bool
  let group: OpaquePointer?
  let notified: OpaquePointer?
  /// Whether the main thread sent it from outside the schedule's work (XCTest's waiter's
  /// timeout, when it is sent for later).
  let sentByTheMainThread = gettid() == getpid() && !ExplorerScheduler.ownThread.isSet

  /// The block's address (a block on the heap, as every block that can be cancelled is, keeps
  /// its own as it is copied).
  var address: UInt { UInt(bitPattern: copied) }

  init(queue: OpaquePointer?, block: UnsafeRawPointer, barrier: Bool = false, group: OpaquePointer? = nil,
       notified: OpaquePointer? = nil) {
    self.queue = UInt(bitPattern: queue)
    copied = Blocks.copy(block)
    (orderedBy, concurrent) = DispatchQueueKinds.order(of: self.queue)
    // A barrier on a global queue is an ordinary block (Dispatch's rule).
    self.barrier = barrier && !RealDispatch.globalQueues.contains(self.queue)
    self.group = group
    self.notified = notified
    // Kept alive while the block waits, as Dispatch keeps them for a block it holds.
    RealDispatch.retain?(queue)
    for group in [group, notified] { if let group { RealDispatch.retain?(group) } }
  }

  deinit {
    Blocks.release(copied)
    RealDispatch.release?(OpaquePointer(bitPattern: queue))
    for group in [group, notified] { if let group { RealDispatch.release?(group) } }
  }

  /// Runs the block here: what it sends is the schedule's own work; then its group is left
  /// and `then` called.
  func run(then: (@Sendable () -> Void)?) {
    ExplorerScheduler.ownThread.whileSet { Blocks.invoke(copied) }
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
  /// sent as one, once its group is empty when it is a `notify` block), through Dispatch's function-and-context calls: Swift makes no block of it.
  func send(after delay: Int64?, starting: (@Sendable () -> Void)? = nil, then: (@Sendable () -> Void)?) {
    let queue = OpaquePointer(bitPattern: self.queue)
    let context = Unmanaged.passRetained(Sending(self, starting: starting, then: then)).toOpaque()
    let work: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
      let sending = Unmanaged<Sending>.fromOpaque(context!).takeRetainedValue()
      sending.starting?()
      sending.sent.run(then: sending.then)
    }
    if let notified {
      RealDispatch.groupNotifyFunction?(notified, queue, context, work)
    } else if let delay, let when = RealDispatch.time?(0, delay) {
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
    let starting: (@Sendable () -> Void)?
    let then: (@Sendable () -> Void)?
    init(_ sent: SentBlock, starting: (@Sendable () -> Void)?, then: (@Sendable () -> Void)?) {
      self.sent = sent
      self.starting = starting
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

/// `dispatch_group_notify`, as this process calls it: the block is the schedule's once the
/// group is empty.
@_cdecl("dispatch_group_notify")
public func asyncHarnessDispatchGroupNotify(_ group: OpaquePointer?, _ queue: OpaquePointer?, _ block: UnsafeRawPointer) {
  if BundleExplorer.scheduler?.submit(SentBlock(queue: queue, block: block, notified: group)) != true {
    RealDispatch.groupNotify?(group, queue, block)
  }
}

/// `dispatch_block_cancel`, as this process calls it: a cancelled block asleep in the schedule
/// goes back to Dispatch.
@_cdecl("dispatch_block_cancel")
public func asyncHarnessDispatchBlockCancel(_ block: UnsafeRawPointer) {
  RealDispatch.blockCancel?(block)
  BundleExplorer.scheduler?.cancelled(block)
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
