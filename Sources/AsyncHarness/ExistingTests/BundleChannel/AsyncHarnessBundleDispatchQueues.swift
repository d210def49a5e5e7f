// Dispatch's queues as the schedule sees them, in the library `harness test` preloads into a
// package's test bundle (see AsyncHarnessBundleExplorer.swift): libdispatch's own functions, and
// the queues a test creates told apart as they are created (`dispatch_queue_create`,
// `dispatch_queue_create_with_target`, `dispatch_set_target_queue` and the attribute calls,
// interposed here): serial or concurrent, and which queue each targets.
#if os(Linux) && compiler(>=6.3)
import Dispatch
import Glibc
import Synchronization

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
  typealias GroupQueueWork = @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?, Work) -> Void
  /// A call on two Dispatch objects: an object and the queue it targets.
  typealias GroupQueueCall = @convention(c) (OpaquePointer?, OpaquePointer?) -> Void
  typealias BlockCall = @convention(c) (UnsafeRawPointer) -> Void
  typealias GroupWait = @convention(c) (OpaquePointer?, UInt64) -> Int
  typealias QueueCreate = @convention(c) (UnsafePointer<CChar>?, OpaquePointer?) -> OpaquePointer?
  typealias QueueCreateWithTarget = @convention(c) (UnsafePointer<CChar>?, OpaquePointer?, OpaquePointer?) -> OpaquePointer?
  typealias AttributeCall = @convention(c) (OpaquePointer?) -> OpaquePointer?
  typealias AttributeWithQuality = @convention(c) (OpaquePointer?, UInt32, Int32) -> OpaquePointer?
  typealias AttributeWithFrequency = @convention(c) (OpaquePointer?, UInt) -> OpaquePointer?

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
  static let groupNotifyFunction = next("dispatch_group_notify_f").map { unsafeBitCast($0, to: GroupQueueWork.self) }
  static let groupNotify = next("dispatch_group_notify").map { unsafeBitCast($0, to: GroupQueueBlock.self) }
  /// `dispatch_group_wait`: 0 once the group is empty, within the time given.
  static let groupWait = next("dispatch_group_wait").map { unsafeBitCast($0, to: GroupWait.self) }
  static let blockCancel = next("dispatch_block_cancel").map { unsafeBitCast($0, to: BlockCall.self) }
  static let setTargetQueue = next("dispatch_set_target_queue").map { unsafeBitCast($0, to: GroupQueueCall.self) }
  static let queueCreate = next("dispatch_queue_create").map { unsafeBitCast($0, to: QueueCreate.self) }
  static let queueCreateWithTarget = next("dispatch_queue_create_with_target")
    .map { unsafeBitCast($0, to: QueueCreateWithTarget.self) }
  static let attributeInitiallyInactive = next("dispatch_queue_attr_make_initially_inactive")
    .map { unsafeBitCast($0, to: AttributeCall.self) }
  static let attributeWithQuality = next("dispatch_queue_attr_make_with_qos_class")
    .map { unsafeBitCast($0, to: AttributeWithQuality.self) }
  static let attributeWithAutoreleaseFrequency = next("dispatch_queue_attr_make_with_autorelease_frequency")
    .map { unsafeBitCast($0, to: AttributeWithFrequency.self) }
  /// `DISPATCH_QUEUE_CONCURRENT`'s address.
  static let concurrentAttribute = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_dispatch_queue_attr_concurrent")
    .map { UInt(bitPattern: $0) } ?? 0
  private static let queueLabel = next("dispatch_queue_get_label").map { unsafeBitCast($0, to: Label.self) }
  /// The main queue's address.
  static let mainQueue = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_dispatch_main_q").map { UInt(bitPattern: $0) } ?? 0
  /// The global queues' addresses, of every quality of service and priority.
  static let globalQueues: Set<UInt> = {
    guard let get = next("dispatch_get_global_queue").map({ unsafeBitCast($0, to: GlobalQueue.self) }) else { return [] }
    return Set([0x21, 0x19, 0x15, 0x11, 0x09, 2, 0, -2, Int(Int16.min)].compactMap { get($0, 0) }.map { UInt(bitPattern: $0) })
  }()
  /// A global queue, where the schedule hears that a group is empty.
  static let anyGlobalQueue = globalQueues.first ?? 0

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

  /// Whether the main thread is free (it runs the main queue: it is idle, or waits in a run
  /// loop, as XCTest's waiter does), as it answers within `seconds`.
  static func mainThreadFree(within seconds: Double) -> Bool {
    let answered = DispatchSemaphore(value: 0)
    onMain { answered.signal() }
    return answered.wait(timeout: .now() + seconds) == .success
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

/// Whether libdispatch itself makes the call being interposed. Dispatch calls some of its own
/// functions through the symbol table, so the library's versions of them hear those calls too:
/// DispatchIO's `dispatch_io_read`, `dispatch_read` and their kin send blocks to the channel's
/// and the descriptor's queues with `dispatch_async`, which it suspends and resumes, and a
/// barrier of a channel waits with `dispatch_group_notify`. Those blocks are how Dispatch works,
/// not work of the test's; taken into the schedule, they ran out of the order Dispatch keeps
/// for them (a job blocked on a queue Dispatch had suspended), and slowed, they crashed
/// libdispatch's event loop now and then.
enum DispatchCaller {
  private typealias Backtrace = @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int32) -> Int32
  private static let backtrace = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "backtrace")
    .map { unsafeBitCast($0, to: Backtrace.self) }
  /// The code of libdispatch, and of this library, as address ranges.
  private static let code: (dispatch: [Range<UInt>], own: [Range<UInt>]) = {
    // Libdispatch's `dispatch_async_f`, and the `dispatch_async` this process calls: this library's.
    let dispatch = RealDispatch.asyncFunction.map { unsafeBitCast($0, to: UInt.self) } ?? 0
    let own = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "dispatch_async").map { UInt(bitPattern: $0) } ?? 0
    let mapped = mappings()
    return (ranges(ofTheObjectHolding: dispatch, in: mapped), ranges(ofTheObjectHolding: own, in: mapped))
  }()

  /// Reads the ranges as the schedule starts: parsing `/proc/self/maps` takes milliseconds in
  /// this unoptimized library (several times that on a busy machine), which would otherwise fall
  /// in the step of the first block a test sends, and could make it a long step.
  static func prepare() {
    _ = isDispatch
  }

  /// Whether the first caller outside this library is libdispatch.
  static var isDispatch: Bool {
    guard let backtrace else { return false }
    return withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: 8) { frames in
      let count = Int(backtrace(frames.baseAddress, 8))
      for frame in frames.prefix(count) {
        let address = UInt(bitPattern: frame)
        if code.own.contains(where: { $0.contains(address) }) { continue }
        return code.dispatch.contains { $0.contains(address) }
      }
      return false
    }
  }

  /// An address range the process maps, and the file it maps.
  private typealias Mapping = (range: Range<UInt>, path: Substring)

  /// The process's mappings, from `/proc/self/maps` (lines `START-END PERMISSIONS OFFSET DEVICE
  /// INODE PATH`, the addresses in hexadecimal).
  private static func mappings() -> [Mapping] {
    readSmallFile("/proc/self/maps").split(separator: "\n").compactMap { line -> Mapping? in
      let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
      let bounds = fields.first?.split(separator: "-").compactMap { UInt($0, radix: 16) } ?? []
      guard fields.count == 6, bounds.count == 2, bounds[0] < bounds[1] else { return nil }
      return (bounds[0]..<bounds[1], fields[5].drop { $0 == " " })
    }
  }

  /// The mappings of the file one of whose `mappings` holds `address`.
  private static func ranges(ofTheObjectHolding address: UInt, in mappings: [Mapping]) -> [Range<UInt>] {
    guard let path = mappings.first(where: { $0.range.contains(address) })?.path else { return [] }
    return mappings.filter { $0.path == path }.map(\.range)
  }
}

/// Which of the queues a test creates run blocks side by side (the attributes made from
/// `DISPATCH_QUEUE_CONCURRENT`, and the queues created with one), and which queue each
/// targets. Kept only under a schedule.
enum DispatchQueueKinds {
  private struct Known {
    var attributes: Set<UInt> = [RealDispatch.concurrentAttribute]
    var queues: Set<UInt> = []
    var targets: [UInt: UInt] = [:]
  }

  private static let known = Mutex(Known())

  /// The order `queue`'s blocks keep: the last queue of its chain of targets that is serial
  /// (neither a global queue nor a concurrent one), and whether that is `queue` itself and runs
  /// blocks side by side (a global queue, or one created concurrent).
  static func order(of queue: UInt) -> (root: UInt, concurrent: Bool) {
    known.withLock { known in
      var root = queue
      while let target = known.targets[root], !RealDispatch.globalQueues.contains(target), !known.queues.contains(target),
        target != root {
        root = target
      }
      return (root, root == queue && (RealDispatch.globalQueues.contains(queue) || known.queues.contains(queue)))
    }
  }

  /// `object` targets `target` now.
  static func target(_ object: OpaquePointer?, _ target: OpaquePointer?) {
    guard BundleExplorer.scheduler != nil, let object else { return }
    known.withLock { $0.targets[UInt(bitPattern: object)] = target.map { UInt(bitPattern: $0) } }
  }

  /// `made`, an attribute made from `attribute`, is concurrent when that one is.
  static func attribute(_ made: OpaquePointer?, madeFrom attribute: OpaquePointer?) -> OpaquePointer? {
    if BundleExplorer.scheduler != nil, attribute != nil, let made {
      known.withLock { if $0.attributes.contains(UInt(bitPattern: attribute)) { _ = $0.attributes.insert(UInt(bitPattern: made)) } }
    }
    return made
  }

  /// `queue` was created with `attribute` (an address a freed queue had may come again).
  static func queue(_ queue: OpaquePointer?, createdWith attribute: OpaquePointer?) -> OpaquePointer? {
    if BundleExplorer.scheduler != nil, let queue {
      known.withLock { known in
        if attribute != nil && known.attributes.contains(UInt(bitPattern: attribute)) {
          known.queues.insert(UInt(bitPattern: queue))
        } else {
          known.queues.remove(UInt(bitPattern: queue))
        }
        known.targets[UInt(bitPattern: queue)] = nil
      }
    }
    return queue
  }
}

@_cdecl("dispatch_queue_create")
public func asyncHarnessDispatchQueueCreate(_ label: UnsafePointer<CChar>?, _ attribute: OpaquePointer?) -> OpaquePointer? {
  DispatchQueueKinds.queue(RealDispatch.queueCreate?(label, attribute), createdWith: attribute)
}

@_cdecl("dispatch_queue_create_with_target")
public func asyncHarnessDispatchQueueCreateWithTarget(_ label: UnsafePointer<CChar>?, _ attribute: OpaquePointer?,
                                                       _ target: OpaquePointer?) -> OpaquePointer? {
  let queue = DispatchQueueKinds.queue(RealDispatch.queueCreateWithTarget?(label, attribute, target), createdWith: attribute)
  DispatchQueueKinds.target(queue, target)
  return queue
}

@_cdecl("dispatch_set_target_queue")
public func asyncHarnessDispatchSetTargetQueue(_ object: OpaquePointer?, _ target: OpaquePointer?) {
  RealDispatch.setTargetQueue?(object, target)
  DispatchQueueKinds.target(object, target)
}

@_cdecl("dispatch_queue_attr_make_initially_inactive")
public func asyncHarnessDispatchAttributeInitiallyInactive(_ attribute: OpaquePointer?) -> OpaquePointer? {
  DispatchQueueKinds.attribute(RealDispatch.attributeInitiallyInactive?(attribute), madeFrom: attribute)
}

@_cdecl("dispatch_queue_attr_make_with_qos_class")
public func asyncHarnessDispatchAttributeWithQuality(_ attribute: OpaquePointer?, _ quality: UInt32,
                                                     _ priority: Int32) -> OpaquePointer? {
  DispatchQueueKinds.attribute(RealDispatch.attributeWithQuality?(attribute, quality, priority), madeFrom: attribute)
}

@_cdecl("dispatch_queue_attr_make_with_autorelease_frequency")
public func asyncHarnessDispatchAttributeWithAutoreleaseFrequency(_ attribute: OpaquePointer?,
                                                                  _ frequency: UInt) -> OpaquePointer? {
  DispatchQueueKinds.attribute(RealDispatch.attributeWithAutoreleaseFrequency?(attribute, frequency), madeFrom: attribute)
}
#endif
