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
