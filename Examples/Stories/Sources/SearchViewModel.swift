import AsyncHarness
import Synchronization

/// A search screen's view model, written as many are: `search(_:)` starts an unstructured
/// `Task` that runs the search on the work queue and shows the results on the delivery
/// queue. It returns at once; the results appear a few hops later.
public final class SearchViewModel: Sendable {
  private let catalog: [String]
  private let work: any Dispatching
  private let delivery: any Dispatching
  private let shown = Mutex<[String]>([])
  private let changed: @Sendable () -> Void

  /// A view model searching `catalog` on `work` and showing results on `delivery`;
  /// `changed` runs on `delivery` after the results change.
  public init(catalog: [String], work: any Dispatching, delivery: any Dispatching,
              changed: @escaping @Sendable () -> Void = {}) {
    self.catalog = catalog
    self.work = work
    self.delivery = delivery
    self.changed = changed
  }

  /// The results on screen.
  public var results: [String] { shown.withLock { $0 } }

  /// Searches for titles containing `query`, in a `Task`.
  public func search(_ query: String) {
    Task {
      let found = await withCheckedContinuation { continuation in
        work.async { continuation.resume(returning: self.catalog.filter { $0.lowercased().contains(query.lowercased()) }) }
      }
      delivery.async {
        self.shown.withLock { $0 = found }
        self.changed()
      }
    }
  }
}
