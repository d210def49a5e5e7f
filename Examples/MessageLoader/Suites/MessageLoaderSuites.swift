import AsyncHarness
import Dispatch
import ExampleSupport
import Foundation
import MessageLoader

/// With the test's own queues: real queues under most waiters (so the test waits), inline
/// ones under the synchronous waiter (so every wait is already satisfied).
let messageLoaderSuite = Suite("MessageLoader") {
  Test("greets with hello when there are no messages, on the main queue") { t in
    let loader = MessageLoader(work: t.background, delivery: t.main) { [] }
    let loaded = t.expectation("messages loaded")
    let messages = Locked<[String]>([])
    loader.load { result in
      t.expect(Thread.isMainThread, "delivered on the main queue")
      messages.set(result)
      loaded.fulfill()
    }
    try t.wait(for: loaded)
    t.expectEqual(messages.value, ["hello"])
  }

  Test("reads the source on the work queue and delivers what it read") { t in
    let work = t.background
    let loader = MessageLoader(work: work, delivery: t.main) {
      t.expect(work.isCurrent, "the source is read on the work queue")
      return ["Lunch at noon?", "Sure"]
    }
    let loaded = t.expectation("messages loaded")
    let messages = Locked<[String]>([])
    loader.load { result in
      messages.set(result)
      loaded.fulfill()
    }
    try t.wait(for: loaded)
    t.expectEqual(messages.value, ["Lunch at noon?", "Sure"])
  }

  Test("the view model shows the greeting once loaded (probe)") { t in
    let viewModel = MessagesViewModel(loader: MessageLoader(work: t.background, delivery: t.main) { [] })
    viewModel.refresh()
    try t.wait(until: { !viewModel.isLoading && viewModel.headline == "hello" })
  }

  Test("with real queues of its own, the work escapes the synchronous waiter (it warns)") { t in
    let loader = MessageLoader(work: AsyncQueue(DispatchQueue(label: "MessageLoader.work")), delivery: AsyncQueue.main) { [] }
    let loaded = t.expectation("messages loaded")
    loader.load { _ in loaded.fulfill() }
    try t.wait(for: loaded)
  }
}

/// With `SyncQueue`s: the work runs inline, so tests are plain Arrange, Act, Assert with no
/// waiting at all, under every waiter.
let messageLoaderSyncQueueSuite = Suite("MessageLoader.SyncQueue") {
  Test("greets with hello, no waiting") { t in
    let loader = MessageLoader(work: SyncQueue(label: "work"), delivery: SyncQueue.main) { [] }
    let messages = Locked<[String]>([])
    loader.load { messages.set($0) }
    t.expectEqual(messages.value, ["hello"])
  }

  Test("the view model is up to date when refresh returns") { t in
    let loader = MessageLoader(work: SyncQueue(label: "work"), delivery: SyncQueue.main) { ["Hi"] }
    let viewModel = MessagesViewModel(loader: loader)
    viewModel.refresh()
    t.expect(!viewModel.isLoading)
    t.expectEqual(viewModel.messages, ["Hi"])
  }
}

/// The deadlock the synchronous approach walks into: the harness reports it as an issue
/// naming both queues instead of hanging.
let messageLoaderDeadlockSuite = Suite("MessageLoader.Deadlock") {
  Test("refreshing synchronously from the main queue: main → background → main",
       .knownIssue("loadNow dispatches synchronously onto main while main waits for background")) { t in
    let viewModel = MessagesViewModel(loader: MessageLoader(work: t.background, delivery: t.main) { [] })
    viewModel.refreshNow()  // on real queues this call would never return
    t.expectEqual(viewModel.headline, "hello")
  }
}

/// Every MessageLoader suite.
public let messageLoaderSuites: [Suite] = [messageLoaderSuite, messageLoaderSyncQueueSuite, messageLoaderDeadlockSuite]
