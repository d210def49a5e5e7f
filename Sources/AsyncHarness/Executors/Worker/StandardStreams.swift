// The C library's `stdout` is a mutable global, which strict concurrency checking refuses
// to touch without this import; it is only read, once, before any test runs.
#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

enum StandardStreams {
  /// Makes the C library (and so `print`) write standard output line by line instead of in
  /// 4 KiB blocks when it is a pipe or a file: a worker's output then reaches its parent as
  /// it is written, lands on the test that wrote it, and is not lost when the test crashes;
  /// captured in-process, it keeps its order with standard error.
  static func bufferStandardOutputByLine() {
    setvbuf(stdout, nil, _IOLBF, 0)
  }
}

extension StandardStreams {
  /// Opens `/dev/null` as each of descriptors 0, 1 and 2 that is closed, so that nothing the
  /// harness opens later (a worker's channel, a report) becomes a standard stream by chance,
  /// and a process started with a standard stream closed behaves as one given `/dev/null`.
  static func openMissing() {
    for descriptor: Int32 in 0...2 where fcntl(descriptor, F_GETFD) == -1 {
      let opened = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
      if opened >= 0 && opened != descriptor {
        dup2(opened, descriptor)
        close(opened)
      }
    }
  }

  /// Copies of descriptors 0, 1 and 2 as the process started with them (close-on-exec, above
  /// the descriptors a test opens), put back before each test: a test that closes or
  /// redirects a standard stream changes nothing for the next one.
  struct Saved {
    private let copies: [Int32]

    init() {
      copies = (0...2).map { fcntl(Int32($0), F_DUPFD_CLOEXEC, WorkerChannel.lowestDescriptor) }
    }

    /// Makes descriptors 0, 1 and 2 what they were when the copies were made.
    func restore() {
      for (descriptor, copy) in copies.enumerated() where copy >= 0 {
        dup2(copy, Int32(descriptor))
      }
    }
  }
}
