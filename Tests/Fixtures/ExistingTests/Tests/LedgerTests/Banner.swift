#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// As the bundle loads, before `main`, this prints a banner to standard output when
// EXISTING_TESTS_BANNER=1, as a C library a package links may (`libledger 1.0 loaded`); and,
// as the process exits, a farewell (`libledger unloaded`). `swift test` runs the bundle's tests
// as without them, and `--list-tests` prints them around XCTest's listing. (`swift test
// --filter` fails with them, `invalid list test JSON structure`: SwiftPM reads the bundle's
// `--dump-tests-json` whole, banner and all.)

@used @section(".init_array")
private let printsABanner: @convention(c) () -> Void = {
  guard getenv("EXISTING_TESTS_BANNER") != nil else { return }
  printToStandardOutput("libledger 1.0 loaded\n")
  atexit { printToStandardOutput("libledger unloaded\n") }
}

/// Writes `text` to descriptor 1 at once (standard output's buffer may not exist yet).
private func printToStandardOutput(_ text: String) {
  _ = Array(text.utf8).withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}
