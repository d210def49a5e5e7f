import Foundation
import GRDB
import PinacotecaCore
import PinacotecaSuites
import XCTest

final class ImageValidationTests: XCTestCase {
  private func validationError(_ change: (inout Image) -> Void) -> ImageValidationError? {
    var image = Image.monaLisa
    change(&image)
    do {
      try image.validate()
      return nil
    } catch {
      return error
    }
  }

  func testCompleteImagesAndPlaceholdersAreValid() throws {
    try Image.monaLisa.validate()
    try Image.placeholder(id: 9).validate()
    XCTAssertTrue(Image.placeholder(id: 9).isPlaceholder)
    XCTAssertFalse(Image.monaLisa.isPlaceholder)
  }

  func testEachRule() {
    XCTAssertEqual(validationError { $0.id = 0 }, .nonPositiveID(0))
    XCTAssertEqual(validationError { $0.title = "  " }, .emptyTitle)
    XCTAssertEqual(validationError { $0.artist = "" }, .emptyArtist)
    XCTAssertEqual(validationError { $0.height = nil }, .incompleteSize)
    XCTAssertEqual(validationError { $0.height = -1 }, .nonPositiveSize(width: 77, height: -1))
    XCTAssertEqual(validationError { $0.imageURL = URL(string: "ftp://images.example.org/x.jpg") },
                   .unsupportedURLScheme("ftp"))
    XCTAssertEqual(validationError { $0.year = 2025 }, .yearAfterLastUpdate(2025))
    XCTAssertNil(validationError { $0.year = 2024 })
    XCTAssertNil(validationError { $0.year = nil })
  }
}

final class ImageStoreTests: XCTestCase {
  func testMigratingAVersion1DatabaseKeepsItsImages() throws {
    let database = try DatabaseQueue()
    try ImageStore.migrator.migrate(database, upTo: "v1: image")
    try database.write { db in
      try db.execute(sql: "INSERT INTO image (id, title, artist, width, height) VALUES (5, 'Old', 'Someone', 3, 4)")
    }
    let store = try ImageStore(database)
    XCTAssertEqual(try store.image(id: 5), Image(id: 5, title: "Old", artist: "Someone", width: 3, height: 4))
    try database.read { db in
      XCTAssertEqual(try ImageStore.migrator.appliedIdentifiers(db), ["v1: image", "v2: lastUpdated, artist index"])
      XCTAssertTrue(try db.indexes(on: "image").contains { $0.name == "image_on_artist" })
    }
  }

  func testAnOnDiskStoreUsesWALAndKeepsImagesAcrossOpenings() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("pinacoteca.sqlite").path
    try ImageStore.onDisk(at: path).save(.monaLisa)
    XCTAssertEqual(try ImageStore.onDisk(at: path).image(id: 1), .monaLisa)
    let mode = try DatabaseQueue(path: path).read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
    XCTAssertEqual(mode, "wal")
  }

  func testAnInvalidImageIsNotSaved() throws {
    let store = try ImageStore.inMemory()
    XCTAssertThrowsError(try store.save(Image(id: -1))) { error in
      XCTAssertEqual(error as? ImageValidationError, .nonPositiveID(-1))
    }
    XCTAssertEqual(try store.allImages(), [])
  }
}
