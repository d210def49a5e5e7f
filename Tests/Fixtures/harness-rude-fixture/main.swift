import AsyncHarness
import AsyncHarnessJUnit
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Ordinary but rude test code, for the tests that worker isolation is invisible (issue 20):
// each suite's rude tests sit between tests that pass, and each rude test passes under
// `swift test` with standard input /dev/null. Run with --time-limit 1.

/// Runs `/bin/sh -c command` through Foundation, its input not redirected; its status and output.
func shell(_ command: String) throws -> (status: Int32, output: String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/sh")
  process.arguments = ["-c", command]
  let output = Pipe()
  process.standardOutput = output
  try process.run()
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Starts `/bin/sh -c command` with `posix_spawn` and no file actions but its output: it
/// inherits every descriptor of this process that is not close-on-exec.
func spawnInheritingEverything(_ command: String) -> String {
  var ends: [Int32] = [0, 0]
  guard pipe(&ends) == 0 else { return "no pipe" }
  for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
  var pid: pid_t = 0
  let arguments: [String] = ["/bin/sh", "-c", command]
  let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
  defer { for pointer in argv { free(pointer) } }
  let spawned = posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ)
  close(ends[1])
  let data = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true).readDataToEndOfFile()
  var status: Int32 = 0
  if spawned == 0 { waitpid(pid, &status, 0) }
  return String(decoding: data, as: UTF8.self)
}

let neverSet = Atomic(false)

// Descriptors first: the processes the Stdin suite starts through Foundation leave pipes of
// their own open in the worker, which a child would then inherit.
let suites = [
  Suite("Descriptors") {
    Test("a child sees only 0, 1 and 2") { t in
      // `test -e` opens nothing, so the shell's own descriptors do not show.
      let open = spawnInheritingEverything(
        "i=0; while [ $i -lt 1100 ]; do [ -e /proc/$$/fd/$i ] && printf '%s ' $i; i=$((i + 1)); done")
      t.expect(open == "0 1 2 ", "the child has open: \(open)")
    }
    Test("closes standard input and output") { _ in
      close(0)
      close(1)
    }
    Test("prints after") { t in
      print("printed after the streams were closed")
      t.expect(true)
    }
  },
  Suite("Stdin") {
    Test("passes first") { t in t.expect(true) }
    Test("reads a line") { t in t.expect(readLine() == nil) }
    Test("reads to the end") { t in t.expect(FileHandle.standardInput.readDataToEndOfFile().isEmpty) }
    Test("runs cat") { t in
      let run = try shell("cat")
      t.expect(run.status == 0 && run.output.isEmpty, "cat: \(run)")
    }
    Test("runs read") { t in t.expect(try shell("read x").status == 1) }
    Test("passes last") { t in t.expect(true) }
  },
  Suite("Directory") {
    Test("changes directory") { _ in
      _ = FileManager.default.changeCurrentDirectoryPath(NSTemporaryDirectory())
    }
    Test("fails after") { t in t.fail("fails after the directory changed") }
  },
  Suite("Binary") {
    Test("prints binary") { _ in
      var bytes = (0...255).map { UInt8($0) }
      bytes += [0xC3, 0x28, 0xFF, 0xFE, 0x1B] + Array("[31mred\u{1}AsyncHarness test starts 0123\n".utf8)
      FileHandle.standardOutput.write(Data(bytes))
    }
    Test("passes") { t in t.expect(true) }
  },
  Suite("Big") {
    Test("prints 20 MB") { _ in
      let chunk = Data(String(repeating: String(repeating: "x", count: 1023) + "\n", count: 1024).utf8)
      for _ in 0..<20 { FileHandle.standardOutput.write(chunk) }
    }
    Test(String(repeating: "n", count: 2_000_000) + " long") { t in t.expect(true) }
    Test("passes after") { t in t.expect(true) }
  },
  Suite("Duplicates") {
    for (index, label) in ["same", "same", "other", "same"].enumerated() {
      Test("adds \(label)") { t in t.expect(index != 1, "the second \"same\" fails") }
    }
  },
  Suite("Twin") { Test("only") { t in t.expect(true) } },
  Suite("Twin") { Test("only") { t in t.fail("the second twin fails") } },
  Suite("Abandoned") {
    Test("spins") { _ async in while !neverSet.load(ordering: .relaxed) {} }
    Test("blocks its thread") { _ async in DispatchSemaphore(value: 0).wait() }
    for number in 1...6 {
      Test("async \(number)") { t async throws in
        await Task.yield()
        try await Task.sleep(for: .milliseconds(5))  // deliberate: suspends, so it needs a free pool thread to go on
        t.expect(true)
      }
    }
  },
  Suite("Leaky") {
    Test("leaves work running") { _ in
      DispatchQueue.global().async {
        for number in 0..<20 {
          print("leaked \(number)")
          usleep(10_000)  // deliberate: work left running after its test
        }
      }
    }
    Test("passes") { t in t.expect(true) }
  },
]
HarnessMain.run(suites, junit: JUnitReporter.factory)
