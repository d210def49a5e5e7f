import Foundation
import PinacotecaCore

extension Image {
  /// The image the fixture `images/1.json` describes.
  public static let monaLisa = Image(
    id: 1, title: "Mona Lisa", artist: "Leonardo da Vinci", year: 1503,
    imageURL: URL(string: "https://images.example.org/mona-lisa.jpg"), width: 77, height: 53,
    lastUpdated: Date(timeIntervalSince1970: 1_714_557_600))  // 2024-05-01T10:00:00Z
}
