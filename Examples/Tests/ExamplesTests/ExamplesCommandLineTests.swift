import Foundation
import XCTest

/// A suites executable's command line as its user meets it: the `examples` executable run as
/// a child process.
final class ExamplesCommandLineTests: XCTestCase {
  private var examples: URL { builtExecutable("examples", for: Self.self) }

  private let usage = "examples [--waiter <name|all>] [--timeout <seconds>] [--isolation <mode>] [--parallel] [--async-width <N>] [--no-capture] [--jitter [<seed>]] [--filter <text> ...] [--skip <text> ...] [--list] [--allow-empty] [--repeat <N>] [--until-failure] [--retries <N>] [--fail-on-flaky] [--shuffle [<seed>]] [--json <path>] [--junit <path>] [--trace <path>] [--report-html <path>] [--junit-profile <name>] [--time-limit <seconds|none>] [--slow <seconds>] [--workers <N>] [--explore <N>] [--explore-policy <policy>] [--schedule <token>] [--format <text|json>] [--only <id> ...] [--only-from <path>] [--rerun-failed] [--shard <index/count>] [--shard-by <suite|test>] [--shard-timings <path>]"

  func testHelpNamesTheExecutableAndShowsTheSeedAsOptional() throws {
    let result = try runToEnd(examples, ["--help"])
    XCTAssertEqual(result.status, 0)
    XCTAssertEqual(result.errors, "")
    XCTAssertEqual(result.output, """
      OVERVIEW: Runs AsyncHarness suites.

      Exit status: 0 when every test passed, 1 when a test failed, 2 for a usage
      error (including a selection with no test, unless --allow-empty).

      USAGE: \(usage)

      OPTIONS:
        --waiter <name|all>     The waiter strategy for every suite, or all for the
                                matrix.
        --timeout <seconds>     The timeout in seconds of waits that pass none
                                (default 1).
        --isolation <mode>      Where tests run: worker (a worker process, so a crash
                                or hang ends only its test; the default), test (a
                                fresh worker process for each test) or none (this
                                process, for a debugger). (values: worker, test, none)
        --parallel              Treat every suite not marked .serialized as
                                .parallel: its tests spread over the workers, its
                                async tests side by side in each.
        --async-width <N>       Run up to N async tests of a suite whose tests run in
                                parallel side by side in each worker, as tasks; 1
                                runs each alone. (default: 1024)
        --no-capture            Run the tests in this process (as --isolation none)
                                and let what they print through to the terminal
                                instead of capturing it as their output.
        --jitter [<seed>]       Delay each item sent to a test's real queues by 0 to
                                2 ms, drawn from the seed (with --repeat, shakes out
                                ordering bugs); without a seed, a random one is
                                printed.
        --filter <text>         Run only tests whose Suite/test path contains this
                                text, or tag:NAME (repeatable). harness test reads it
                                as swift test does: a regular expression a test's ID
                                contains.
        --skip <text>           Leave out the tests this would select as --filter
                                (repeatable).
        --list                  List the selected tests' IDs (Suite/test, one a line)
                                and exit.
        --allow-empty           Accept a selection with no test as an empty, passing
                                run (by default it is an error).
        --repeat <N>            Run each test N times. (default: 1)
        --until-failure         With --repeat, stop after the first repetition that
                                fails.
        --retries <N>           Run a test that fails or errors again, up to N more
                                times; one that then passes is flaky. (default: 0)
        --fail-on-flaky         Fail the run (exit status 1) when a test was flaky:
                                failed, then passed on a retry.
        --shuffle [<seed>]      Shuffle tests within each suite; without a seed, a
                                random one is printed.
        --json <path>           Write the event stream as JSON Lines to this file.
        --junit <path>          Write a JUnit XML report to this file.
        --trace <path>          Write the run as Chrome trace-event JSON (Perfetto,
                                chrome://tracing) to this file when it ends: a track
                                per lane, a slice per attempt.
        --report-html <path>    Write the run as one self-contained HTML page to this
                                file when it ends: summary, failures with their
                                output, flaky and slowest tests, a timeline per lane.
        --junit-profile <name>  With --junit: the profile, standard (the default) or
                                github (adds file and line attributes).
        --time-limit <seconds|none>
                                The longest a test may run, in seconds (fractions
                                allowed), or none for no limit (default: 60).
        --slow <seconds>        Announce a test still running after this many seconds
                                (and each multiple) as SLOW.
        --workers <N>           Run tests in N worker processes at once; a suite runs
                                whole in one of them, unless its tests run in
                                parallel (harness test may cut a long XCTest class,
                                by the last run's times). (default: 1)
        --explore <N>           Run each test under N schedules (seeds 1 to N) and
                                report each test's pass rate: a harness suite's under
                                the scheduled waiter, a package's own tests' Swift
                                concurrency in an order each seed chooses, on virtual
                                time (harness test).
        --explore-policy <policy>
                                With --explore: how the schedules pick the next work
                                item, random (a random walk) or pctD (PCT for bugs of
                                depth D, 1 to 9); default: the scheduled waiter's
                                own, random for a package's own tests.
        --schedule <token>      Rerun exactly the schedule of a replay token a
                                failing test printed (SEED:POLICY:TEST, then the
                                steps it took, :STEPS-FINGERPRINT), for that test
                                only; a replay that takes other steps says where and
                                why.
        --format <text|json>    With --list: text (one test ID a line, the default)
                                or json (one object a line: id, suite, name, tags,
                                file, line). (values: text, json)
        --only <id>             Run only the test with this ID, Suite/test as --list
                                prints it (repeatable).
        --only-from <path>      Run only the tests whose IDs this file lists, one a
                                line.
        --rerun-failed          Run only the tests that failed or errored in the last
                                run (a suites executable records it in
                                .build/harness/, harness test beside the test
                                bundle), under that run's flags unless new ones are
                                given.
        --shard <index/count>   Run only shard INDEX of COUNT, counted from 1 (1/3,
                                2/3, 3/3).
        --shard-by <suite|test> With --shard: what goes to a shard whole, suite (the
                                default) or test. (values: suite, test)
        --shard-timings <path>  With --shard: balance shards by the test times of
                                this JUnit report of an earlier run. With --workers
                                N, harness test balances its workers by them (else by
                                its last run's).
        -h, --help              Show help information.


      """)
  }

  func testAUsageErrorNamesTheExecutable() throws {
    let result = try runToEnd(examples, ["--frobnicate"])
    XCTAssertEqual(result.status, 2)
    XCTAssertEqual(result.output, "")
    XCTAssertEqual(result.errors, """
      error: Unknown option '--frobnicate'
      USAGE: \(usage)
        See 'examples --help' for more information.

      """)
  }
}
