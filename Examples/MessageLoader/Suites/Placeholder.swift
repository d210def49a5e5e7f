import AsyncHarness
public let messageLoaderSuites: [Suite] = []
