import AsyncHarness
public let storySuites: [Suite] = []
