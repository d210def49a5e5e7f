import Foundation
import Testing

// BridgeReportTests asserts the lines of the issues below: keep them where they are.

struct FixtureError: Error {}

@Suite struct Arithmetic {
  @Test func passes() {
    #expect(1 + 1 == 2)
  }

  @Test func fails() {
    #expect(1 + 1 == 3, "one and one")
  }

  @Test func throwsAnError() throws {
    throw FixtureError()
  }

  @Test(.disabled("not on this machine")) func skipped() {}

  @Test(arguments: [1, 2]) func parameterized(value: Int) {
    #expect(value == 1)
  }
}

/// Crashes when FIXTURE_CRASH is set: the run whose event stream ends without this test's end.
@Test func crashes() {
  if ProcessInfo.processInfo.environment["FIXTURE_CRASH"] != nil {
    fatalError("the fixture crashes")
  }
}

/// Declared after `crashes()`: in a run without parallelism that crashed, it never starts.
@Test func afterTheCrash() {}
