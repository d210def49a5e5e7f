/// The MessageLoader story's asynchronous path, tested in plain XCTest on real queues: the
/// loader reads its source on a work queue and delivers on the main queue, and the view model
/// shows what it delivered. (`loadNow`/`refreshNow` are left out: called from the main queue
/// they deadlock, main → work → main, which is that story's point.)
import AsyncHarness
import Foundation
import MessageLoader
import XCTest

final class MessageLoaderCallbackXCTests: XCTestCase {
  func testGreetsWithHelloOnTheMainQueueWhenThereAreNoMessages() async {
    let loader = MessageLoader(work: SerialQueue("messages.work").queue, delivery: AsyncQueue.main) { [] }
    let loaded = expectation(description: "messages loaded")
    let delivered = Box<(messages: [String], onMain: Bool)?>(nil)
    loader.load { messages in
      delivered.set((messages, Thread.isMainThread))
      loaded.fulfill()
    }
    await fulfillment(of: [loaded], timeout: callbackTimeout)
    XCTAssertEqual(delivered.value?.messages, [MessageLoader.greeting])
    XCTAssertEqual(delivered.value?.onMain, true, "delivered on the main queue")
  }

  func testReadsTheSourceOnTheWorkQueueAndDeliversWhatItRead() async {
    let work = SerialQueue("messages.work")
    let readOn = Box<(work: Bool, main: Bool)?>(nil)
    let loader = MessageLoader(work: work.queue, delivery: AsyncQueue.main) {
      readOn.set((work.isCurrent, Thread.isMainThread))
      return ["Lunch at noon?", "Sure"]
    }
    let loaded = expectation(description: "messages loaded")
    let messages = Box<[String]>([])
    loader.load { result in
      messages.set(result)
      loaded.fulfill()
    }
    await fulfillment(of: [loaded], timeout: callbackTimeout)
    XCTAssertEqual(messages.value, ["Lunch at noon?", "Sure"])
    XCTAssertEqual(readOn.value?.work, true, "the source is read on the work queue")
    XCTAssertEqual(readOn.value?.main, false, "the source is not read on the main thread")
  }

  func testLoadsDeliverInTheOrderTheyWereAskedFor() async {
    // Both queues are serial: the reads run in the order asked, and so do the deliveries.
    let reads = Box(0)
    let loader = MessageLoader(work: SerialQueue("messages.work").queue, delivery: AsyncQueue.main) {
      var number = 0
      reads.update { count in
        count += 1
        number = count
      }
      return ["read \(number)"]
    }
    let delivered = Box<[[String]]>([])
    var loads: [XCTestExpectation] = []
    for number in 1...3 {
      let loaded = expectation(description: "load \(number) delivered")
      loads.append(loaded)
      loader.load { messages in
        delivered.update { $0.append(messages) }
        loaded.fulfill()
      }
    }
    await fulfillment(of: loads, timeout: callbackTimeout, enforceOrder: true)
    XCTAssertEqual(delivered.value, [["read 1"], ["read 2"], ["read 3"]])
  }

  func testTheViewModelIsLoadingUntilTheMessagesAreOnScreen() async {
    let viewModel = Box<MessagesViewModel?>(nil)
    let loadingWhileRead = Box<Bool?>(nil)
    let loader = MessageLoader(work: SerialQueue("messages.work").queue, delivery: AsyncQueue.main) {
      loadingWhileRead.set(viewModel.value?.isLoading)
      return ["Hi", "How are you?"]
    }
    let model = MessagesViewModel(loader: loader)
    viewModel.set(model)
    let shown = expectation(description: "messages on screen")
    let onScreen = Box<(messages: [String], headline: String, isLoading: Bool, onMain: Bool)?>(nil)
    model.refresh {
      onScreen.set((model.messages, model.headline, model.isLoading, Thread.isMainThread))
      shown.fulfill()
    }
    await fulfillment(of: [shown], timeout: callbackTimeout)
    XCTAssertEqual(loadingWhileRead.value, true, "loading while the source is read")
    XCTAssertEqual(onScreen.value?.messages, ["Hi", "How are you?"])
    XCTAssertEqual(onScreen.value?.headline, "Hi")
    XCTAssertEqual(onScreen.value?.isLoading, false, "no longer loading once shown")
    XCTAssertEqual(onScreen.value?.onMain, true, "`loaded` runs on the delivery queue, the main one")
  }
}
