/// The Pinacoteca resource manager's callback story, tested in plain XCTest: it answers at
/// once with what the store has (a placeholder for a new image), then fetches the details,
/// saves them on its work queue, posts `didSaveImage` and calls the update handler on the
/// queue it was given. Over an in-memory GRDB store, the server API controller on stubbed
/// URLSessions, real queues and a notification center of each test's own.
import AsyncHarness
import Foundation
import PinacotecaCore
import PinacotecaFixtures
import Synchronization
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ResourceManagerCallbackXCTests: XCTestCase {
  /// What one test works with: a fresh store, the manager saving on `work`, and the center
  /// it posts on.
  private struct Setup {
    let store: ImageStore
    let work: SerialQueue
    let center: NotificationCenter
    let manager: ResourceManager
  }

  private func makeSetup(session: URLSession = .fixtures(), api: (any ImageFetching)? = nil) throws -> Setup {
    let store = try ImageStore.inMemory()
    let work = SerialQueue("pinacoteca.work")
    let center = NotificationCenter()
    let api = api ?? ServerAPIController(baseURL: URL(string: "https://pinacoteca.example")!, session: session)
    return Setup(store: store, work: work, center: center,
                 manager: ResourceManager(store: store, api: api, work: work.queue, center: center))
  }

  /// Asks for image `id`, delivering the update on `queue`; returns what `image(id:)`
  /// answered at once, and, once the update came, the update and what `inHandler` said in
  /// the handler.
  private func askForImage<Seen: Sendable>(
    _ id: Int64, from setup: Setup, on queue: any Dispatching, inHandler: @escaping @Sendable () -> Seen
  ) async throws -> (first: Image, update: Result<Image, ResourceError>?, seen: Seen?) {
    let updated = expectation(description: "update handler called for image \(id)")
    let delivered = Box<(Result<Image, ResourceError>?, Seen?)>((nil, nil))
    let first = try setup.manager.image(id: id, queue: queue) { answer in
      delivered.set((answer, inHandler()))
      updated.fulfill()
    }
    await fulfillment(of: [updated], timeout: callbackTimeout)
    return (first, delivered.value.0, delivered.value.1)
  }

  func testAnUnknownImageIsAPlaceholderAtOnceThenTheServersDetailsOnTheQueueGiven() async throws {
    let setup = try makeSetup()
    let delivery = SerialQueue("pinacoteca.delivery")
    let store = setup.store
    let (first, update, seen) = try await askForImage(1, from: setup, on: delivery.queue) {
      (onQueue: delivery.isCurrent, stored: try? store.image(id: 1))
    }
    XCTAssertEqual(first, .placeholder(id: 1), "answered at once with a placeholder")
    XCTAssertEqual(update, .success(.monaLisa))
    XCTAssertEqual(seen?.onQueue, true, "the handler runs on the queue it was given")
    XCTAssertEqual(seen?.stored, .monaLisa, "the details are saved before the handler runs")
    XCTAssertEqual(try setup.store.image(id: 1), .monaLisa)
  }

  func testEachSaveIsPostedWithItsIDThePlaceholderFirstThenTheDetailsFromTheWorkQueue() async throws {
    let setup = try makeSetup()
    let (store, work) = (setup.store, setup.work)
    /// Each post: the id it carries, whether the store then held a placeholder, and
    /// whether it was posted from the work queue.
    let posts = Box<[(id: Int64?, placeholder: Bool?, fromWork: Bool)]>([])
    let saved = XCTNSNotificationExpectation(name: ResourceManager.didSaveImage, object: setup.manager,
                                             notificationCenter: setup.center)
    saved.expectedFulfillmentCount = 2
    saved.handler = { note in
      let id = note.userInfo?[ResourceManager.imageIDKey] as? Int64
      let stored = id.flatMap { try? store.image(id: $0) }
      posts.update { $0.append((id, stored?.isPlaceholder, work.isCurrent)) }
      return true
    }
    try setup.manager.image(id: 1, queue: AsyncQueue.main) { _ in }
    await fulfillment(of: [saved], timeout: callbackTimeout)
    let seen = posts.value
    XCTAssertEqual(seen.map(\.id), [1, 1])
    XCTAssertEqual(seen.map(\.placeholder), [true, false], "the placeholder is saved first, then the details")
    XCTAssertEqual(seen.map(\.fromWork), [false, true], "the details are saved on the work queue")
  }

  func testAStoredImageIsAnsweredAtOnceThenRefreshedFromTheServer() async throws {
    let setup = try makeSetup()
    var stale = Image.monaLisa
    stale.title = "La Gioconda"
    stale.lastUpdated = Date(timeIntervalSince1970: 1_600_000_000)
    try setup.store.save(stale)
    let (first, update, onMain) = try await askForImage(1, from: setup, on: AsyncQueue.main) { Thread.isMainThread }
    XCTAssertEqual(first, stale, "answered at once with what the store had")
    XCTAssertEqual(update, .success(.monaLisa))
    XCTAssertEqual(onMain, true, "the handler runs on the main queue")
    XCTAssertEqual(try setup.store.allImages(), [.monaLisa])
  }

  func testAServerErrorReachesTheHandlerAndThePlaceholderStays() async throws {
    let setup = try makeSetup()
    let posts = Box(0)
    let observer = setup.center.addObserver(forName: ResourceManager.didSaveImage, object: setup.manager, queue: nil) { _ in
      posts.update { $0 += 1 }
    }
    defer { setup.center.removeObserver(observer) }
    let (first, update, _) = try await askForImage(50, from: setup, on: AsyncQueue.main) {}
    XCTAssertEqual(first, .placeholder(id: 50))
    XCTAssertEqual(update, .failure(.api(.httpStatus(503))))
    XCTAssertEqual(try setup.store.image(id: 50), .placeholder(id: 50))
    XCTAssertEqual(posts.value, 1, "only the placeholder was saved")
  }

  func testNoConnectionReachesTheHandlerOnTheMainQueueAsATransportError() async throws {
    let setup = try makeSetup(session: .offline())
    let (_, update, onMain) = try await askForImage(2, from: setup, on: AsyncQueue.main) { Thread.isMainThread }
    XCTAssertEqual(update, .failure(.api(.transport(.notConnectedToInternet))))
    XCTAssertEqual(onMain, true, "the handler runs on the main queue")
    XCTAssertEqual(try setup.store.image(id: 2), .placeholder(id: 2))
  }

  func testNothingIsDeliveredBeforeTheServerAnswersAndInvalidDetailsAreADatabaseError() async throws {
    let server = HeldImageFetcher()
    let setup = try makeSetup(api: server)
    let updated = expectation(description: "update handler called")
    let update = Box<Result<Image, ResourceError>?>(nil)
    let first = try setup.manager.image(id: 7, queue: AsyncQueue.main) { answer in
      update.set(answer)
      updated.fulfill()
    }
    XCTAssertEqual(first, .placeholder(id: 7))
    XCTAssertEqual(try setup.store.image(id: 7), .placeholder(id: 7), "the placeholder is stored at once")
    XCTAssertEqual(server.requestedIDs, [7])
    XCTAssertNil(update.value, "no update before the server answered")

    // The server answers with a blank title: the store refuses it.
    var blankTitle = Image.monaLisa
    blankTitle.id = 7
    blankTitle.title = " "
    XCTAssertTrue(server.answer(7, with: .success(blankTitle)), "a fetch of image 7 was pending")
    await fulfillment(of: [updated], timeout: callbackTimeout)
    XCTAssertEqual(update.value, .failure(.database(String(describing: ImageValidationError.emptyTitle))))
    XCTAssertEqual(try setup.store.image(id: 7), .placeholder(id: 7), "nothing invalid is saved")
  }
}

/// A stand-in for the server: holds each fetch until the test answers it, then completes on
/// the queue the caller gave.
private final class HeldImageFetcher: ImageFetching {
  private struct Call {
    var id: Int64
    var queue: any Dispatching
    var completion: @Sendable (Result<Image, APIError>) -> Void
  }

  private let calls = Mutex<(pending: [Call], requested: [Int64])>(([], []))

  var requestedIDs: [Int64] { calls.withLock { $0.requested } }

  func fetchImage(id: Int64, queue: any Dispatching, completion: @escaping @Sendable (Result<Image, APIError>) -> Void) {
    calls.withLock {
      $0.requested.append(id)
      $0.pending.append(Call(id: id, queue: queue, completion: completion))
    }
  }

  /// Completes the oldest pending fetch of `id` with `result`; whether there was one.
  func answer(_ id: Int64, with result: Result<Image, APIError>) -> Bool {
    let call = calls.withLock { calls -> Call? in
      guard let index = calls.pending.firstIndex(where: { $0.id == id }) else { return nil }
      return calls.pending.remove(at: index)
    }
    guard let call else { return false }
    call.queue.async { call.completion(result) }
    return true
  }
}
