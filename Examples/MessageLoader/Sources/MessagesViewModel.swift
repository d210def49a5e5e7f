import Synchronization

/// What a messages screen shows, fed by a ``MessageLoader``.
public final class MessagesViewModel: Sendable {
  private struct State {
    var messages: [String] = []
    var isLoading = false
  }

  private let loader: MessageLoader
  private let state = Mutex(State())

  /// Creates a view model that loads through `loader`.
  public init(loader: MessageLoader) {
    self.loader = loader
  }

  /// The messages on screen.
  public var messages: [String] { state.withLock { $0.messages } }
  /// Whether a refresh is under way.
  public var isLoading: Bool { state.withLock { $0.isLoading } }
  /// The first line of the screen: the first message, or nothing yet.
  public var headline: String { messages.first ?? "" }

  /// Loads the messages; `loaded` runs after they are on screen, on the loader's delivery
  /// queue.
  public func refresh(loaded: (@Sendable () -> Void)? = nil) {
    state.withLock { $0.isLoading = true }
    loader.load { [self] messages in
      show(messages)
      loaded?()
    }
  }

  /// Loads the messages and returns once they are on screen (see
  /// ``MessageLoader/loadNow(update:)`` for why this deadlocks on the main queue).
  public func refreshNow() {
    state.withLock { $0.isLoading = true }
    loader.loadNow { show($0) }
  }

  private func show(_ messages: [String]) {
    state.withLock { $0 = State(messages: messages, isLoading: false) }
  }
}
