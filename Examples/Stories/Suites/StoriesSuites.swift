import AsyncHarness

/// The seed stories' suites, in the order the articles tell them.
public let storySuites: [Suite] = [
  calculatorSuite, notificationCounterSuite, layeredStoreSuite, lateSignalSuite, profileScreenSuite,
  retryingUploaderSuite, searchViewModelSuite,
]

/// The names of the two tests of the late-signal story: the one that leaves work behind
/// and the one that runs while that work signals.
public let lateSignalStory = (
  suite: lateSignalSuite.name,
  leavesWorkBehind: lateSignalSuite.tests[0].name,
  runsDuringLateSignal: lateSignalSuite.tests[1].name
)
