import AsyncHarness
import AsyncHarnessJUnit
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A suites executable for the tests that end runs and tests early.
//
// `Fixture`: `passes` passes; `blocks` writes "blocking" to standard output and waits until
// the process is ended from outside (run with --isolation none).
//
// `Crashes`: tests that end their process in each way a test can, between tests that pass,
// for the worker isolation tests (run with --filter Crashes/).
let suites = [
  Suite("Fixture") {
    Test("passes") { t in t.expect(true) }
    Test("blocks") { _ in
      FileHandle.standardOutput.write(Data("blocking\n".utf8))
      DispatchSemaphore(value: 0).wait()
    }
  },
  Suite("Crashes") {
    Test("passes first") { t in t.expect(true) }
    Test("fatal error") { _ in
      print("about to fail")
      fatalError("the fixture's fatal error")
    }
    Test("precondition") { t in
      t.log("checking the invariant")
      precondition(Int(ProcessInfo.processInfo.environment["FIXTURE_NEVER_SET"] ?? "0") == 1, "the invariant broke")
    }
    Test("segmentation fault") { _ in
      UnsafeMutablePointer<Int>(bitPattern: 0x8)!.pointee = 1
    }
    Test("bus error") { _ in raise(SIGBUS) }
    Test("abort") { _ in abort() }
    Test("exit 3") { _ in exit(3) }
    Test("records, then crashes") { t in
      t.expect(1 == 2, "recorded before the crash")
      FileHandle.standardError.write(Data("written to standard error\n".utf8))
      fatalError("after the failure")
    }
    Test("hangs outside a wait") { _ in
      print("spinning")
      while ProcessInfo.processInfo.environment["FIXTURE_NEVER_SET"] == nil {}
    }
    Test("blocks on a semaphore") { _ in DispatchSemaphore(value: 0).wait() }
    Test("prints 50 MB") { _ in
      let line = String(repeating: "x", count: 1023) + "\n"
      let chunk = String(repeating: line, count: 1024)
      for _ in 0..<50 { FileHandle.standardOutput.write(Data(chunk.utf8)) }
    }
    Test("fails") { t in t.fail("an ordinary failure") }
    Test("passes last") { t in t.expect(true) }
  },
  // Tests that fail on their first attempts by design (they read their attempt number),
  // for the retry tests.
  Suite("Flaky") {
    Test("passes") { t in t.expect(true) }
    Test("passes on attempt 2") { t in
      print("attempt \(t.id.attempt)")
      t.expect(t.id.attempt >= 2, "attempt \(t.id.attempt) fails")
    }
    Test("crashes, then passes") { t in
      if t.id.attempt == 1 { fatalError("the first attempt crashes") }
    }
    Test("passes on attempt 3", .retries(2)) { t in t.expect(t.id.attempt >= 3, "attempt \(t.id.attempt) fails") }
    Test("always fails") { t in t.fail("fails every attempt") }
  },
  // Output through each way a test can write it, for the capture tests.
  Suite("Output") {
    Test("prints everywhere") { t in
      print("print to standard output")
      FileHandle.standardError.write(Data("FileHandle to standard error\n".utf8))
      puts("C puts")
      t.log("logged")
    }
  },
  // Prints the temporary directory tests get, for the Bazel protocol tests.
  Suite("Environment") {
    Test("prints the temporary directory") { _ in print(FileManager.default.temporaryDirectory.path) }
  },
  // Tests that print their process's id.
  Suite("Processes") {
    for number in 1...3 {
      Test("prints its process \(number)") { _ in print("process \(getpid())") }
    }
  },
  // 300 quick tests that each print their number to standard output (a whole line, then a
  // partial one) and standard error; every seventh fails. A worker runs them back to back
  // while its parent reads: each test's output must stay its own.
  Suite("Pipeline") {
    for number in 0..<300 {
      Test("test \(number)") { t in
        print("\(number) out")
        FileHandle.standardError.write(Data("\(number) err\n".utf8))
        print("\(number) tail", terminator: "")
        if number % 7 == 3 { t.fail("fails on purpose") }
      }
    }
  },
  // For the spare worker of --isolation test: the first test prints the clock (ticks since
  // boot) as it ends, 300 ms after it began; the second prints when its process started.
  Suite("Spare") {
    Test("sleeps, then prints the time") { _ in
      usleep(300_000)  // deliberate: outlasts a worker's start, which the spare must overlap
      print("ended at \(bootTicks())")
    }
    Test("prints when its process started") { _ in print("started at \(processStartTicks())") }
  },
  // Two tasks race to update a count through an actor, printing each step, for the replay
  // tests of Swift concurrency under the scheduled strategy.
  Suite("Concurrency") {
    Test("a lost update between two tasks") { t async throws in
      let store = Store()
      let tasks = (0..<2).map { number in
        Task {
          let value = await store.load()
          print("task \(number) loaded \(value)")
          await store.save(value + 1)
          print("task \(number) saved \(value + 1)")
        }
      }
      for task in tasks { await task.value }
      t.expectEqual(await store.load(), 2)
    }
  },
  // Independent tests, for the parallel runs: each waits for a callback 50 ms away and
  // prints its process; among them a crash, a hang (run with --time-limit), a test that
  // passes on its retry, a failure and a skip.
  Suite("Parallel", .parallel) {
    for number in 0..<12 {
      Test("waits \(number)") { t in
        let called = t.expectation("the callback")
        t.queue("callbacks").asyncAfter(.milliseconds(50)) { called.fulfill() }
        try t.wait(for: called)
        print("process \(getpid())")
      }
    }
    Test("crashes") { _ in fatalError("a parallel test crashes") }
    Test("hangs outside a wait") { _ in
      while ProcessInfo.processInfo.environment["FIXTURE_NEVER_SET"] == nil {}
    }
    Test("passes on attempt 2", .retries(1)) { t in t.expect(t.id.attempt >= 2, "attempt \(t.id.attempt) fails") }
    Test("fails") { t in t.fail("fails on purpose") }
    Test("skipped", .skip("not here")) { _ in }
    Test("passes") { t in t.expect(true) }
  },
  // Async tests side by side in a worker (issue 31): under each real-time strategy they await
  // callbacks, fail, throw, time out in a wait, are fulfilled late, record a known issue and
  // pass on a retry, each with issues of its own; a blocking test among them runs alone. `fulfils late` comes
  // first and `outlives the late callback` keeps the worker busy past its late callback.
  Suite("SideBySide", .parallel) {
    Test("fulfils late") { t async throws in
      let late = t.expectation("a late callback")
      t.queue("late").asyncAfter(.milliseconds(100)) { late.fulfill() }
      try await t.wait(for: late, timeout: .milliseconds(20))
    }
    for number in 0..<12 {
      Test("awaits \(number)") { t async throws in
        let called = t.expectation("callback \(number)")
        t.queue("callbacks").asyncAfter(.milliseconds(25)) { called.fulfill() }
        try await t.wait(for: called)
        t.log("awaited \(number)\n")
      }
      if number == 5 { Test("blocks among them") { t in t.expect(true) } }
    }
    Test("fails after awaiting") { t async throws in
      let called = t.expectation("the callback")
      t.background.async { called.fulfill() }
      try await t.wait(for: called)
      t.fail("fails on purpose")
    }
    Test("throws") { _ async throws in throw CocoaError(.featureUnsupported) }
    Test("times out") { t async throws in
      try await t.wait(for: t.expectation("a callback that never comes"), timeout: .milliseconds(50))
    }
    Test("records a known issue", .knownIssue("the cart miscounts")) { t async in t.fail("counts 3, not 2") }
    Test("passes on attempt 2", .retries(1)) { t async in t.expect(t.id.attempt >= 2, "attempt \(t.id.attempt) fails") }
    // Stays running past `fulfils late`'s late callback, so the worker is still busy when it lands.
    Test("outlives the late callback") { _ async throws in
      try await Task.sleep(for: .milliseconds(300))  // deliberate: the worker must still be busy when the callback lands
    }
  },
  // A crash (one after forking a process that holds the output), a hang and an interrupt
  // among async tests side by side (each run selects one).
  Suite("SideBySideRude", .parallel) {
    Test("hangs") { _ async in
      while ProcessInfo.processInfo.environment["FIXTURE_NEVER_SET"] == nil {}
    }
    Test("crashes") { _ async throws in
      try await Task.sleep(for: .milliseconds(100))  // deliberate: the awaiting tests have started beside it
      fatalError("a side-by-side test crashes")
    }
    Test("forks and crashes") { _ async throws in
      // The child holds the worker's output past the worker's exit, until it is stopped.
      if fork() == 0 {
        while true { pause() }
      }
      try await Task.sleep(for: .milliseconds(100))  // deliberate: the awaiting tests have started beside it
      fatalError("a side-by-side test crashes after forking")
    }
    Test("queue crash") { t async throws in
      let never = t.expectation("never")
      // On a raw dispatch queue, none of the test's code runs: the crash names no test.
      DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { fatalError("a side-by-side test's queue crashes") }
      try await t.wait(for: never, timeout: .seconds(5))
    }
    Test("test queue crash") { t async throws in
      let never = t.expectation("never")
      // On the test's own queue, the work carries the test's crash notice.
      t.queue("crashing").asyncAfter(.milliseconds(100)) { fatalError("a side-by-side test's own queue crashes") }
      try await t.wait(for: never, timeout: .seconds(5))
    }
    for number in 0..<6 {
      Test("awaits \(number)") { t async throws in
        let called = t.expectation("callback \(number)")
        t.queue("callbacks").asyncAfter(.milliseconds(400)) { called.fulfill() }
        try await t.wait(for: called)
      }
    }
    for number in 0..<4 {
      Test("waits for an interrupt \(number)") { _ async throws in
        print("side by side: \(number) waits")
        try await Task.sleep(for: .seconds(30))  // deliberate: still running when the interrupt arrives
      }
    }
  },
  // Tests that leave work running when they return, each followed by a test that needs a
  // clean process: spinning tasks hold the cooperative pool, a spinning thread, a child
  // process nobody waits for.
  Suite("Leaks") {
    Test("spins tasks") { _ in
      // Made on the main thread, as the harness makes async test bodies: the same pool.
      for _ in 0..<8 {
        Task { while ProcessInfo.processInfo.environment["FIXTURE_NEVER_SET"] == nil {} }
      }
    }
    Test("awaits after the tasks") { t async in t.expectEqual(await Task { 7 }.value, 7) }
    Test("spins a thread") { _ in
      Thread.detachNewThread { while ProcessInfo.processInfo.environment["FIXTURE_NEVER_SET"] == nil {} }
    }
    Test("awaits after the thread") { t async in t.expectEqual(await Task { 7 }.value, 7) }
    Test("leaves a child") { _ in
      let child = Process()
      child.executableURL = URL(fileURLWithPath: "/bin/sleep")
      child.arguments = ["7"]
      try child.run()
    }
    Test("runs after the child") { t in t.expect(true) }
    // Tasks spinning at each priority: on Linux each priority's pool has threads of its own.
    for (name, priority) in [("background", TaskPriority.background), ("medium", .medium), ("high", .high)] {
      Test("spins detached tasks at priority \(name)") { _ in
        for _ in 0..<8 {
          Task.detached(priority: priority) { while ProcessInfo.processInfo.environment["FIXTURE_NEVER_SET"] == nil {} }
        }
      }
      Test("awaits after the \(name) tasks") { t async in
        t.expectEqual(await Task.detached(priority: priority) { 7 }.value, 7)
      }
    }
  },
  // Tests whose names and messages are hostile to reports (markup, control characters), for
  // the trace tests; the second fails with such a message.
  Suite("Hostile") {
    Test("<script>alert(1)</script>") { t in t.expect(true) }
    Test("bell \u{07} escape \u{1B}[31m nul \u{00} end") { t in t.fail("</script><img src=x onerror=alert(1)> \u{01}\u{1F}") }
  },
  // A test that leaves behind work that crashes its worker once the next test (in another
  // worker, side by side) opens a FIFO; that test waits until the crashed worker is gone.
  // Run with FIXTURE_LEFT_DIR set and --filter LeftBehind: the run fails outside every test.
  Suite("LeftBehind") {
    Test("leaves a crash behind") { _ in
      guard let directory = ProcessInfo.processInfo.environment["FIXTURE_LEFT_DIR"] else { return }
      mkfifo("\(directory)/go", 0o600)
      try "\(getpid())".write(toFile: "\(directory)/pid", atomically: true, encoding: .utf8)
      Thread.detachNewThread {
        // Blocks until a writer opens the FIFO.
        _ = open("\(directory)/go", O_RDONLY)
        fatalError("the crash a test left behind")
      }
    }
  },
  // A test that leaves behind a handler that crashes its worker as it exits (run with
  // FIXTURE_EXIT_CRASH set): the worker, told to stop at the run's end, crashes.
  Suite("ExitCrash") {
    Test("crashes at exit") { _ in
      guard ProcessInfo.processInfo.environment["FIXTURE_EXIT_CRASH"] != nil else { return }
      atexit { abort() }
    }
  },
  Suite("LeftBehindAwaits", .parallel) {
    Test("sets off the crash and waits for it") { _ async throws in
      guard let directory = ProcessInfo.processInfo.environment["FIXTURE_LEFT_DIR"],
            let pid = try? String(contentsOfFile: "\(directory)/pid", encoding: .utf8) else { return }
      close(open("\(directory)/go", O_WRONLY))
      // The crashed worker's /proc entry goes once its parent reaped it.
      for _ in 0..<2000 where FileManager.default.fileExists(atPath: "/proc/\(pid)") {
        try await Task.sleep(for: .milliseconds(10))  // deliberate: no event says another process was reaped
      }
    }
  },
  // Tests that rely on running in order in one process: the second reads what the first
  // left behind. It says .serialized, so --parallel keeps it in order in one worker.
  Suite("Ordered", .serialized) {
    Test("leaves a value") { _ in setenv("FIXTURE_LEFT_BEHIND", "\(getpid())", 1) }
    Test("reads the value") { t in
      t.expectEqual(ProcessInfo.processInfo.environment["FIXTURE_LEFT_BEHIND"], "\(getpid())")
    }
  },
  // For the trace: waits that ended before their worker crashed are still on the timeline.
  Suite("Traced") {
    Test("waits, then crashes") { t in
      let callback = t.expectation("callback")
      t.background.async { callback.fulfill() }
      try t.wait(for: callback)
      try t.wait(until: "ready", timeout: .seconds(1)) { true }
      fatalError("after two waits")
    }
  },
  // A test that forks without exec, then crashes: its child holds the worker's channel and
  // output until it is stopped with the worker's process group.
  Suite("Forks") {
    Test("crashes after forking") { _ in
      if fork() == 0 {
        while true { pause() }
      }
      fatalError("crashes after forking")
    }
  },
]

/// Clock ticks since boot, the unit of a process's start time in `/proc/self/stat`.
func bootTicks() -> Int {
  #if os(Linux)
  var now = timespec()
  clock_gettime(CLOCK_BOOTTIME, &now)
  let hertz = sysconf(Int32(_SC_CLK_TCK))
  return now.tv_sec * hertz + now.tv_nsec / (1_000_000_000 / hertz)
  #else
  return 0
  #endif
}

/// When this process started, in clock ticks since boot (Linux), or 0.
func processStartTicks() -> Int {
  guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
        let afterName = stat.range(of: ") ", options: .backwards) else { return 0 }
  // Fields from the third on; the start time is the 22nd field.
  let fields = stat[afterName.upperBound...].split(separator: " ")
  return fields.count > 19 ? Int(fields[19]) ?? 0 : 0
}

/// A count kept by an actor: each call is safe, a load and a save are two.
actor Store {
  private var value = 0
  func load() -> Int { value }
  func save(_ value: Int) { self.value = value }
}

HarnessMain.run(suites, junit: JUnitReporter.factory)
