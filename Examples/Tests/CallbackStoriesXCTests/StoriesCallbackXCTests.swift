/// Three of the Stories that run on Dispatch, tested in plain XCTest on real queues: a store
/// that saves in layers and posts after each, a profile screen fed by a cache and a server on
/// queues of their own (the fixed screen, on which the server's name always wins), and an
/// uploader that retries after a back-off.
import AsyncHarness
import Foundation
import Stories
import XCTest

final class StoriesCallbackXCTests: XCTestCase {
  func testTheLayeredStorePostsEachLayerInOrderAndIsOnDiskAfterTheLast() async {
    let center = NotificationCenter()
    let store = LayeredStore(work: SerialQueue("layers.work").queue, center: center)
    let layers = Box<[String]>([])
    let observer = center.addObserver(forName: LayeredStore.didSave, object: store, queue: nil) { note in
      layers.update { $0.append(note.userInfo?[LayeredStore.layerKey] as? String ?? "?") }
    }
    defer { center.removeObserver(observer) }
    let onDisk = XCTNSNotificationExpectation(name: LayeredStore.didSave, object: store, notificationCenter: center)
    onDisk.handler = { note in note.userInfo?[LayeredStore.layerKey] as? String == LayeredStore.Layer.disk.rawValue }
    store.insert(["Mona Lisa", "The Starry Night"])
    await fulfillment(of: [onDisk], timeout: callbackTimeout)
    XCTAssertEqual(store.persistedItems, ["Mona Lisa", "The Starry Night"])
    XCTAssertEqual(layers.value, LayeredStore.Layer.allCases.map(\.rawValue), "child, then parent, then disk")
  }

  func testTheProfileScreenEndsOnTheServersNameWhateverAnswersFirst() async {
    let sources = ProfileSources(cachedName: "Ada", freshName: "Ada Lovelace",
                                 disk: SerialQueue("profile.disk").queue,
                                 network: SerialQueue("profile.network").queue,
                                 decoding: SerialQueue("profile.decoding").queue)
    let answered = expectation(description: "both sources answered")
    answered.expectedFulfillmentCount = 2
    let offMain = Box(0)
    let screen = ProfileScreen(sources: sources, delivery: AsyncQueue.main) {
      if !Thread.isMainThread { offMain.update { $0 += 1 } }
      answered.fulfill()
    }
    screen.load()
    await fulfillment(of: [answered], timeout: callbackTimeout)
    XCTAssertEqual(screen.name, "Ada Lovelace")
    XCTAssertEqual(offMain.value, 0, "updates shown off the main queue")
  }

  func testTheUploaderRetriesAfterItsBackOffUntilTheServerAccepts() async {
    let backOff: Duration = .milliseconds(20)
    let uploads = SerialQueue("uploads")
    let attemptsOffQueue = Box(0)
    let uploader = RetryingUploader(queue: uploads.queue, backOff: backOff) { attempt in
      if !uploads.isCurrent { attemptsOffQueue.update { $0 += 1 } }
      return attempt == 3
    }
    let finished = expectation(description: "upload finished")
    let succeeded = Box<Bool?>(nil)
    let started = ContinuousClock.now
    uploader.upload { success in
      succeeded.set(success)
      finished.fulfill()
    }
    await fulfillment(of: [finished], timeout: callbackTimeout)
    XCTAssertEqual(succeeded.value, true, "the third attempt succeeds")
    XCTAssertEqual(uploader.attemptCount, 3)
    XCTAssertEqual(attemptsOffQueue.value, 0, "attempts made off the upload queue")
    XCTAssertGreaterThanOrEqual(ContinuousClock.now - started, backOff * 2, "two back-offs were waited")
  }
}
