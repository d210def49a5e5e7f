import AsyncHarness
import Foundation
import Stories

/// A store that saves three times per insert: wait until the very last save.
let layeredStoreSuite = Suite("Stories.LayeredStore") {
  Test("waits for every save by count") { t in
    let center = NotificationCenter()
    let store = LayeredStore(work: t.background, center: center)
    let saved = t.expectation(forNotification: LayeredStore.didSave, object: store, center: center,
                              count: LayeredStore.Layer.allCases.count)
    store.insert(["Mona Lisa", "The Starry Night"])
    try t.wait(for: saved)
    t.expectEqual(store.persistedItems, ["Mona Lisa", "The Starry Night"])
  }

  Test("waits for the disk save by filtering the notifications") { t in
    let center = NotificationCenter()
    let store = LayeredStore(work: t.background, center: center)
    let onDisk = t.expectation(forNotification: LayeredStore.didSave, object: store, center: center) { note in
      note.userInfo?[LayeredStore.layerKey] as? String == LayeredStore.Layer.disk.rawValue
    }
    store.insert(["Mona Lisa"])
    try t.wait(for: onDisk)
    t.expectEqual(store.persistedItems, ["Mona Lisa"])
  }

  Test("waits until the data is on disk by probe") { t in
    let store = LayeredStore(work: t.background, center: NotificationCenter())
    store.insert(["Mona Lisa"])
    try t.wait(until: { store.persistedItems == ["Mona Lisa"] })
  }
}
