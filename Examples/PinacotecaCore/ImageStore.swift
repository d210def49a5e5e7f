import Foundation
import GRDB

/// Where images are kept: an SQLite database through GRDB, in memory for tests and on disk
/// (in WAL mode) for the app.
///
/// Every save validates the image first, so the database only ever holds valid images.
public final class ImageStore: Sendable {
  private let writer: any DatabaseWriter

  /// Opens a store over a database and migrates it to the current schema.
  /// - Throws: a GRDB error when the migration fails.
  public init(_ writer: any DatabaseWriter) throws {
    self.writer = writer
    try Self.migrator.migrate(writer)
  }

  /// A new, empty store in memory: what each test uses.
  public static func inMemory() throws -> ImageStore {
    try ImageStore(DatabaseQueue())
  }

  /// A store in a database file, opened in WAL mode so readers do not block the writer.
  public static func onDisk(at path: String) throws -> ImageStore {
    try ImageStore(DatabasePool(path: path))
  }

  /// The schema's history. Migrations are only ever added, never edited.
  public static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1: image") { db in
      try db.create(table: Image.databaseTableName) { table in
        table.column("id", .integer).primaryKey()
        table.column("title", .text)
        table.column("artist", .text)
        table.column("year", .integer)
        table.column("imageURL", .text)
        table.column("width", .integer)
        table.column("height", .integer)
      }
    }
    migrator.registerMigration("v2: lastUpdated, artist index") { db in
      try db.alter(table: Image.databaseTableName) { table in
        table.add(column: "lastUpdated", .datetime)
      }
      try db.create(index: "image_on_artist", on: Image.databaseTableName, columns: ["artist"])
    }
    return migrator
  }

  /// The stored image with this id, if any.
  public func image(id: Int64) throws -> Image? {
    try writer.read { db in try Image.fetchOne(db, key: id) }
  }

  /// Every stored image, by id.
  public func allImages() throws -> [Image] {
    try writer.read { db in try Image.order(Column("id")).fetchAll(db) }
  }

  /// Validates the image, then inserts it or replaces the stored one with the same id.
  /// - Throws: an ``ImageValidationError`` for an invalid image (nothing is written), or a
  ///   GRDB error.
  public func save(_ image: Image) throws {
    try image.validate()
    try writer.write { db in try image.upsert(db) }
  }
}
