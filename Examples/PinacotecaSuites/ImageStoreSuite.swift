import AsyncHarness
import PinacotecaCore

/// The model layer: synchronous tests, each with its own in-memory store.
let imageStoreSuite = Suite("Pinacoteca.ImageStore") {
  Test("a new store is empty") { t in
    let store = try ImageStore.inMemory()
    t.expectEqual(try store.allImages(), [])
  }

  Test("saves an image and reads it back") { t in
    let store = try ImageStore.inMemory()
    try store.save(.monaLisa)
    t.expectEqual(try store.image(id: 1), .monaLisa)
    t.expectEqual(try store.image(id: 2), nil)
  }

  Test("saving again replaces the stored image") { t in
    let store = try ImageStore.inMemory()
    try store.save(.placeholder(id: 1))
    try store.save(.monaLisa)
    t.expectEqual(try store.allImages(), [.monaLisa])
  }

  Test("refuses an invalid image and writes nothing") { t in
    let store = try ImageStore.inMemory()
    var invalid = Image.monaLisa
    invalid.width = 0
    do {
      try store.save(invalid)
      t.fail("saved an image with width 0")
    } catch {
      t.expectEqual(error as? ImageValidationError, .nonPositiveSize(width: 0, height: 53))
    }
    t.expectEqual(try store.allImages(), [])
  }
}
