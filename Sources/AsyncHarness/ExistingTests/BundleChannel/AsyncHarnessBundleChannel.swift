// The library `harness test` preloads (LD_PRELOAD) into a package's own test bundle, so that
// it hears each testing library on a descriptor that only it reads, never from what tests
// print. It is not compiled into AsyncHarness: the harness embeds this file and compiles it
// with the package's own toolchain (`swiftc -emit-library`) the first time it runs the
// package's tests (BundleChannelLibrary.swift). It imports nothing of AsyncHarness, so a
// bundle that links AsyncHarness itself never sees a second copy of it.
//
// At load time, before `main`, a constructor reads the variables the harness set and removes
// them (and this library from LD_PRELOAD; and puts back those set for the runtimes' start
// alone, SWIFT_BACKTRACE and ASAN_OPTIONS), so that test code and the processes it starts never
// see them, moves the channel above descriptor 100, close-on-exec (and keeps `close` from closing
// it: a test may close every descriptor above 2), and puts standard output in
// line buffering (what a test prints just before it crashes is not lost in a buffer). Each
// record goes to the channel whole, just after a numbered marker line written to standard
// output (after what the tests printed so far), so that the harness cuts the output into
// tests exactly, whatever the tests print:
// - XCTest: an `XCTestObservation` observer writes a record (Shared/ChannelRecord.swift, one
//   line of JSON) for each class's start and end, each test's start, each failure with its
//   file and line, and its end with XCTest's own outcome; XCTest's own printing observer is
//   removed, so that standard output is only what the tests print.
// - Swift Testing writes its own event stream, to the path the harness names
//   (`--event-stream-output-path /dev/fd/3`): this library's `fopen` hands it a stream whose
//   lines become records, written on the thread that posts each event. Any other `fopen` is
//   the C library's. Should Swift Testing not open the path through `fopen`, it opens the
//   descriptor itself and its records come without markers.
// In a Swift Testing listing there is no channel: with ASYNC_HARNESS_BUNDLE_DISCOVERY set, the
// library writes what the bundle declares to the file it names (AsyncHarnessBundleDiscovery.swift).
#if os(Linux)
import Glibc
import Synchronization
import XCTest

/// The variables `harness test` sets for this library; keep in step with BundleChannelLibrary.swift.
private enum Variable {
  static let channel = "ASYNC_HARNESS_BUNDLE_CHANNEL"
  static let library = "ASYNC_HARNESS_BUNDLE_LIBRARY"
  static let marker = "ASYNC_HARNESS_BUNDLE_MARKER"
  static let preload = "ASYNC_HARNESS_BUNDLE_PRELOAD"
  static let discovery = "ASYNC_HARNESS_BUNDLE_DISCOVERY"
  static let putBack = "ASYNC_HARNESS_BUNDLE_PUT_BACK"
  static let originalPrefix = "ASYNC_HARNESS_BUNDLE_WAS_"
}

@used @section(".init_array")
private let load: @convention(c) () -> Void = { BundleChannel.load() }

private enum BundleChannel {
  /// The channel's writer: set at load time, before any other thread runs, and only read after.
  nonisolated(unsafe) static var writer: ChannelWriter?
  /// The channel's descriptor (-1 without one): set and read as ``writer`` is.
  nonisolated(unsafe) static var channel: Int32 = -1
  /// The path Swift Testing's stream is opened at, until it is.
  static let streamPath = Mutex<String?>(nil)

  static func load() {
    if let preload = take(Variable.preload) { removeFromPreload(preload) }
    // Set for the runtimes' start alone, which read them before this library loads.
    for name in take(Variable.putBack)?.split(separator: ",").map(String.init) ?? [] {
      if let original = take(Variable.originalPrefix + name) { setenv(name, original, 1) } else { unsetenv(name) }
    }
    let discovery = take(Variable.discovery)
    #if canImport(Testing) && compiler(>=6.3)
    BundleDiscovery.output.withLock { $0 = discovery }
    #endif
    guard let channelText = take(Variable.channel), let inherited = Int32(channelText) else { return }
    let library = take(Variable.library)
    let marker = take(Variable.marker) ?? ""
    setvbuf(stdout, nil, _IOLBF, 0)
    // Close-on-exec where it is, for a Swift Testing that opens it itself; and above 100.
    _ = fcntl(inherited, F_SETFD, FD_CLOEXEC)
    let channel = fcntl(inherited, F_DUPFD_CLOEXEC, 100)
    guard channel >= 0 else { return }
    self.channel = channel
    let writer = ChannelWriter(channel: channel, marker: marker)
    BundleExplorer.send = { writer.send($0) }
    if library == "xctest" {
      close(inherited)
      XCTestObservationCenter.shared.addTestObserver(ChannelObserver(writer: writer))
    } else {
      streamPath.withLock { $0 = "/dev/fd/\(inherited)" }
      ExperimentalFields.turnOn()
    }
    self.writer = writer
  }

  /// The variable's value, removed from the environment.
  private static func take(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    defer { unsetenv(name) }
    return String(cString: value)
  }

  /// Removes `path` from LD_PRELOAD, so that processes the tests start do not load it.
  private static func removeFromPreload(_ path: String) {
    guard let value = getenv("LD_PRELOAD") else { return }
    let rest = String(cString: value).split(whereSeparator: { $0 == ":" || $0 == " " }).filter { $0 != path }
    if rest.isEmpty { unsetenv("LD_PRELOAD") } else { setenv("LD_PRELOAD", rest.joined(separator: ":"), 1) }
  }

  /// Swift Testing's event stream: a stream whose lines the writer sends as records, and the
  /// descriptor it would have opened closed. `nil` for any other path.
  static func stream(at path: UnsafePointer<CChar>) -> UnsafeMutablePointer<FILE>? {
    let opened = streamPath.withLock { streamPath -> String? in
      guard let expected = streamPath, String(cString: path) == expected else { return nil }
      streamPath = nil
      return expected
    }
    guard let opened, writer != nil else { return nil }
    if let descriptor = Int32(opened.dropFirst("/dev/fd/".count)) { close(descriptor) }
    var functions = cookie_io_functions_t()
    functions.write = { _, bytes, count in
      ExperimentalFields.putBack()
      guard let bytes, let writer = BundleChannel.writer else { return count }
      writer.sendLines(UnsafeRawBufferPointer(start: bytes, count: count))
      return count
    }
    return fopencookie(nil, "w", functions)
  }

  /// The C library's `close`.
  static let nextClose = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "close")
    .map { unsafeBitCast($0, to: (@convention(c) (Int32) -> Int32).self) }

  typealias Open = @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<FILE>?
  /// The C library's `fopen` and `fopen64`.
  static let nextOpen = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "fopen").map { unsafeBitCast($0, to: Open.self) }
  static let nextOpen64 = dlsym(UnsafeMutableRawPointer(bitPattern: -1), "fopen64").map { unsafeBitCast($0, to: Open.self) }
}

/// The underscored fields of Swift Testing's stream (a skip's comments, a thrown error, a test
/// case's arguments), which version 6.3, the one the harness asks for, writes only with
/// SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED set (an older version would turn off the
/// warnings that `swift test` hands a test's issue handlers). Swift Testing reads the variable
/// once, as it encodes its first record, before any test runs: it is set at load time and put
/// back as the process had it as that record is written, so that tests see their own.
private enum ExperimentalFields {
  static let name = "SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED"
  /// The variable as the process was started with it (`.some(nil)`: unset), until it is put back.
  static let original = Mutex<String??>(nil)

  static func turnOn() {
    original.withLock { $0 = .some(getenv(name).map { String(cString: $0) }) }
    setenv(name, "1", 1)
  }

  static func putBack() {
    guard let value = original.withLock({ original -> String?? in
      defer { original = nil }
      return original
    }) else { return }
    if let value { setenv(name, value, 1) } else { unsetenv(name) }
  }
}

/// `fopen`, as this process calls it: Swift Testing's stream, or the C library's.
@_cdecl("fopen")
public func asyncHarnessOpen(_ path: UnsafePointer<CChar>?, _ mode: UnsafePointer<CChar>?) -> UnsafeMutablePointer<FILE>? {
  if let path, let stream = BundleChannel.stream(at: path) { return stream }
  return BundleChannel.nextOpen?(path, mode)
}

/// `fopen64`, as this process calls it: Swift Testing's stream, or the C library's.
@_cdecl("fopen64")
public func asyncHarnessOpen64(_ path: UnsafePointer<CChar>?, _ mode: UnsafePointer<CChar>?) -> UnsafeMutablePointer<FILE>? {
  if let path, let stream = BundleChannel.stream(at: path) { return stream }
  return BundleChannel.nextOpen64?(path, mode)
}

/// `close`, as this process calls it: the C library's, but for the channel's descriptor, which
/// stays open (and the call succeeds). A test that closes every descriptor above 2, as code
/// that detaches itself does, would otherwise cut the harness off from its tests: the test and
/// those after it in the process would have no end. No descriptor the test opened can be the
/// channel's, which is in use.
@_cdecl("close")
public func asyncHarnessClose(_ descriptor: Int32) -> Int32 {
  if descriptor >= 0 && descriptor == BundleChannel.channel { return 0 }
  guard let close = BundleChannel.nextClose else {
    errno = ENOSYS
    return -1
  }
  return close(descriptor)
}

/// Writes records to the channel, each after its numbered marker on standard output: its own
/// (``ChannelRecord``, Shared/ChannelRecord.swift), and Swift Testing's lines as they are. Just
/// before the record of a test's end, the child processes of this process that run then go in
/// a record of their own (``ChannelRecord/children(_:)``): the harness reports those it did
/// not know of as what the test left running, when no other test ran beside it.
final class ChannelWriter: Sendable {
  private let channel: Int32
  private let marker: String
  /// The records written so far, and Swift Testing's stream cut into lines (a record may be
  /// written in parts).
  private let state = Mutex(State())

  private struct State {
    var records = 0
    var lines = LineSplitter()
  }

  init(channel: Int32, marker: String) {
    self.channel = channel
    self.marker = marker
  }

  /// Sends a record; `endsATest` when it is a test's end.
  func send(_ record: ChannelRecord, endsATest: Bool = false) {
    state.withLock { state in
      if endsATest { sendEndNotes(&state) }
      send(record.encoded()[...], records: &state.records)
    }
  }

  /// Sends each whole line of what Swift Testing's stream wrote, keeping a line's start
  /// until its end.
  func sendLines(_ bytes: UnsafeRawBufferPointer) {
    state.withLock { state in
      state.lines.append(Array(bytes)[...])
      while let line = state.lines.next() {
        if Self.line(line, holds: Self.testEnded) {
          sendEndNotes(&state)
          BundleExplorer.testEnded()
        }
        if Self.line(line, holds: Self.testStarted) { BundleExplorer.testStarted(holdingTheMainThread: false) }
        send(line, records: &state.records)
      }
    }
  }

  /// Whether `line` holds `mark`, by `memmem`: a line may be tens of megabytes (an attachment's
  /// bytes, in base64), which a generic search in this unoptimized library took seconds over
  /// (12 s for 50 MB), while the test that attached it waited.
  private static func line(_ line: ArraySlice<UInt8>, holds mark: [UInt8]) -> Bool {
    line.withUnsafeBytes { bytes in
      mark.withUnsafeBytes { mark in
        guard let base = bytes.baseAddress, let needle = mark.baseAddress else { return false }
        return memmem(base, bytes.count, needle, mark.count) != nil
      }
    }
  }

  /// What marks Swift Testing's records of a test's start and end.
  private static let testStarted = Array(#""kind":"testStarted""#.utf8)
  private static let testEnded = Array(#""kind":"testEnded""#.utf8)

  /// Writes the next marker to standard output (after what the tests printed), then the
  /// record to the channel, each whole.
  private func send(_ record: ArraySlice<UInt8>, records: inout Int) {
    records += 1
    // Standard output only: flushing every stream would flush Swift Testing's, which is this.
    fflush(stdout)
    writeWhole(Array("\u{1}\(marker) \(records)\n".utf8)[...], to: 1)
    writeWhole(record + [0x0A], to: channel)
  }

  /// Sends what is known just before a test's end: the children running now, and under a
  /// schedule (`harness test --explore`) the steps it took (AsyncHarnessBundleExplorer.swift).
  private func sendEndNotes(_ state: inout State) {
    sendChildren(&state)
    if let schedule = BundleExplorer.record() { send(schedule.encoded()[...], records: &state.records) }
  }

  /// Sends the children running now, if any. One `waitid` that reaps nothing tells whether
  /// there is any child at all (the usual case: none).
  private func sendChildren(_ state: inout State) {
    var info = siginfo_t()
    guard waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return }
    let children = Self.runningChildren()
    guard !children.isEmpty else { return }
    let processes = children.map { "\($0) (\(Self.command(of: $0)))" }
    send(ChannelRecord.children(processes).encoded()[...], records: &state.records)
  }

  /// The children of every thread of this process that have not exited.
  private static func runningChildren() -> [Int32] {
    let children = directoryEntries("/proc/self/task").compactMap { Int32($0) }.flatMap { thread in
      readSmallFile("/proc/self/task/\(thread)/children").split(separator: " ").compactMap { Int32($0) }
    }
    return children.filter { child in
      let state = readSmallFile("/proc/\(child)/stat").split(separator: ")").last?.split(separator: " ").first
      return state != nil && state != "Z" && state != "X"
    }
  }

  /// A process's command line, its arguments joined by spaces. A child caught in its
  /// `execve` shows none for a moment: it is asked again, for up to 10 ms.
  private static func command(of process: Int32) -> String {
    for _ in 0..<50 {
      let command = readSmallFile("/proc/\(process)/cmdline").split(separator: "\0").joined(separator: " ")
      if !command.isEmpty { return command }
      usleep(200)
    }
    return "unknown command"
  }
}

/// Writes `bytes` whole to `descriptor`, unless it fails.
func writeWhole(_ bytes: ArraySlice<UInt8>, to descriptor: Int32) {
  var bytes = bytes
  while !bytes.isEmpty {
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    if written < 0 && errno == EINTR { continue }
    guard written > 0 else { return }
    bytes = bytes.dropFirst(written)
  }
}

/// The names in a directory of /proc (`/proc/self/task`: the threads), without `.` and `..`;
/// none when it cannot be read.
func directoryEntries(_ path: String) -> [String] {
  guard let directory = opendir(path) else { return [] }
  defer { closedir(directory) }
  var names: [String] = []
  while let entry = readdir(directory) {
    let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    if name != "." && name != ".." { names.append(name) }
  }
  return names
}

/// A small file of /proc, whole; empty when it cannot be read.
func readSmallFile(_ path: String) -> String {
  let descriptor = open(path, O_RDONLY | O_CLOEXEC)
  guard descriptor >= 0 else { return "" }
  defer { close(descriptor) }
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 4096)
  while true {
    let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
    guard count > 0 else { break }
    bytes += chunk[..<count]
  }
  return String(decoding: bytes, as: UTF8.self)
}
#endif
