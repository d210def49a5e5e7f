import AsyncHarness
import Foundation

/// The seed stories' suites, in the order the articles tell them.
public let storySuites: [Suite] = [
  calculatorSuite, notificationCounterSuite, layeredStoreSuite, lateSignalSuite, profileScreenSuite,
  retryingUploaderSuite, searchViewModelSuite, ticketOfficeSuite, likeCounterSuite, liveSearchSuite,
]

/// The traits of a test that demonstrates an ordering bug: it runs only when asked
/// (`EXAMPLES_ORDERING_BUG=1`), as it fails in a fraction of schedules.
let orderingBugTraits: [TestTrait] = ProcessInfo.processInfo.environment["EXAMPLES_ORDERING_BUG"] != nil
  ? [] : [.skip("an ordering bug found by --explore; EXAMPLES_ORDERING_BUG=1 runs it")]

/// The names of the two tests of the late-signal story: the one that leaves work behind
/// and the one that runs while that work signals.
public let lateSignalStory = (
  suite: lateSignalSuite.name,
  leavesWorkBehind: lateSignalSuite.tests[0].name,
  runsDuringLateSignal: lateSignalSuite.tests[1].name
)
