import AsyncHarness
import ExampleSupport
import Foundation
import PinacotecaCore

/// A manager over a fresh in-memory store and a recording fetcher, saving on the test's
/// background queue.
private func makeManager(_ t: TestContext) throws -> (ResourceManager, ImageStore, RecordingImageFetcher) {
  let store = try ImageStore.inMemory()
  let fetcher = RecordingImageFetcher()
  return (ResourceManager(store: store, api: fetcher, work: t.background), store, fetcher)
}

/// The resource manager with the API controller replaced by a test double.
let resourceManagerSuite = Suite("Pinacoteca.ResourceManager") {
  Test("answers an unknown image at once with a stored placeholder, then asks the server") { t in
    let (manager, store, fetcher) = try makeManager(t)
    let handled = Locked(false)
    let image = try manager.image(id: 7, queue: t.main) { _ in handled.set(true) }
    t.expectEqual(image, .placeholder(id: 7))
    t.expectEqual(try store.image(id: 7), .placeholder(id: 7))
    t.expectEqual(fetcher.requestedIDs, [7])
    t.expect(!handled.value, "no update before the server answered")
  }

  Test("answers a stored image at once, then refreshes it") { t in
    let (manager, store, fetcher) = try makeManager(t)
    try store.save(.monaLisa)
    t.expectEqual(try manager.image(id: 1, queue: t.main) { _ in }, .monaLisa)
    t.expectEqual(fetcher.requestedIDs, [1])
  }

  Test("saves the server's details and calls the handler on the requested queue") { t in
    let (manager, store, fetcher) = try makeManager(t)
    let queue = t.main
    let updated = t.expectation("update handler called")
    let result = Locked<Result<Image, ResourceError>?>(nil)
    try manager.image(id: 1, queue: queue) { answer in
      t.expect(queue.isCurrent, "the handler runs on the queue it was given")
      result.set(answer)
      updated.fulfill()
    }
    try t.require(fetcher.answer(1, with: .success(.monaLisa)), "a fetch of image 1 was pending")
    try t.wait(for: updated)
    t.expectEqual(result.value, .success(.monaLisa))
    t.expectEqual(try store.image(id: 1), .monaLisa)
  }

  Test("posts a notification for each save: the placeholder, then the details") { t in
    let (manager, _, fetcher) = try makeManager(t)
    let savedIDs = Locked<[Int64]>([])
    let saved = t.expectation(forNotification: ResourceManager.didSaveImage, object: manager, count: 2) { note in
      savedIDs.update { $0.append(note.userInfo?[ResourceManager.imageIDKey] as? Int64 ?? -1) }
      return true
    }
    try manager.image(id: 1, queue: t.main) { _ in }
    fetcher.answer(1, with: .success(.monaLisa))
    try t.wait(for: saved)
    t.expectEqual(savedIDs.value, [1, 1])
  }

  Test("a server error reaches the handler and the placeholder stays") { t in
    let (manager, store, fetcher) = try makeManager(t)
    let updated = t.expectation("update handler called")
    let result = Locked<Result<Image, ResourceError>?>(nil)
    try manager.image(id: 50, queue: t.main) { answer in
      result.set(answer)
      updated.fulfill()
    }
    fetcher.answer(50, with: .failure(.httpStatus(503)))
    try t.wait(for: updated)
    t.expectEqual(result.value, .failure(.api(.httpStatus(503))))
    t.expectEqual(try store.image(id: 50), .placeholder(id: 50))
  }
}
