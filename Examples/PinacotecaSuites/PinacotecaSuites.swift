import AsyncHarness

/// Every PinacotecaCore suite: the model, the API controller, the resource manager, and the
/// integration with the real server.
public let pinacotecaSuites: [Suite] = [
  imageStoreSuite, serverAPIControllerSuite, resourceManagerSuite, integrationSuite,
]
