/// The Pinacoteca server API controller's completion API, tested in plain XCTest over
/// `URLSession.fixtures()` and `.offline()` (stub `URLProtocol`s, no network): what it maps
/// each answer to, and that the completion arrives on the queue it was given.
import AsyncHarness
import Foundation
import PinacotecaCore
import PinacotecaFixtures
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ServerAPIControllerCallbackXCTests: XCTestCase {
  private let baseURL = URL(string: "https://pinacoteca.example")!

  /// Fetches image `id` through the completion API, delivering on `queue`; returns what
  /// was delivered and whether `isOnQueue` held in the completion.
  private func fetch(_ id: Int64, session: URLSession = .fixtures(), queue: any Dispatching,
                     isOnQueue: @escaping @Sendable () -> Bool) async -> (Result<Image, APIError>?, onQueue: Bool) {
    let api = ServerAPIController(baseURL: baseURL, session: session)
    let delivered = expectation(description: "image \(id) delivered")
    let result = Box<(Result<Image, APIError>?, onQueue: Bool)>((nil, false))
    api.fetchImage(id: id, queue: queue) { answer in
      result.set((answer, isOnQueue()))
      delivered.fulfill()
    }
    await fulfillment(of: [delivered], timeout: callbackTimeout)
    return result.value
  }

  func testMapsTheServersJSONAndDeliversOnTheQueueGiven() async {
    let delivery = SerialQueue("pinacoteca.delivery")
    let (result, onQueue) = await fetch(1, queue: delivery.queue) { delivery.isCurrent && delivery.queue.isCurrent }
    XCTAssertEqual(result, .success(.monaLisa))
    XCTAssertTrue(onQueue, "the completion runs on the queue it was given")
  }

  func testMapsHTTPStatusesAndBadAnswersToTypedErrors() async {
    let delivery = SerialQueue("pinacoteca.delivery")
    let expected: [Int64: Result<Image, APIError>] = [
      999: .failure(.httpStatus(404)),
      50: .failure(.httpStatus(503)),
      41: .failure(.missingFields(["artist", "width"])),
      42: .failure(.invalidImage(.nonPositiveSize(width: 0, height: 10))),
    ]
    let api = ServerAPIController(baseURL: baseURL, session: .fixtures())
    let results = Box<[Int64: Result<Image, APIError>]>([:])
    let offQueue = Box<[Int64]>([])
    var delivered: [XCTestExpectation] = []
    // All at once, as a screen asking for several images would: each completion on the
    // delivery queue, in whatever order the answers come.
    for id in expected.keys.sorted() + [40] {
      let answered = expectation(description: "image \(id) delivered")
      delivered.append(answered)
      api.fetchImage(id: id, queue: delivery.queue) { answer in
        if !delivery.isCurrent { offQueue.update { $0.append(id) } }
        results.update { $0[id] = answer }
        answered.fulfill()
      }
    }
    await fulfillment(of: delivered, timeout: callbackTimeout)
    XCTAssertEqual(offQueue.value, [], "completions that ran off the delivery queue")
    for (id, result) in expected {
      XCTAssertEqual(results.value[id], result, "image \(id)")
    }
    guard case .failure(.badJSON)? = results.value[40] else {
      return XCTFail("truncated JSON should be bad JSON, got \(String(describing: results.value[40]))")
    }
  }

  func testNoConnectionIsATransportErrorOnTheMainQueue() async {
    let (result, onMain) = await fetch(1, session: .offline(), queue: AsyncQueue.main) { Thread.isMainThread }
    XCTAssertEqual(result, .failure(.transport(.notConnectedToInternet)))
    XCTAssertTrue(onMain, "the completion runs on the main queue")
  }
}
