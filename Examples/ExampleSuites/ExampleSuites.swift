import AsyncHarness
import MessageLoaderSuites
import PinacotecaSuites
import StoriesSuites

/// Every example suite, in learning order: the seed stories, MessageLoader, then
/// PinacotecaCore. The `examples` executable and the package's tests both run these.
public let allExampleSuites: [Suite] = storySuites + messageLoaderSuites + pinacotecaSuites
