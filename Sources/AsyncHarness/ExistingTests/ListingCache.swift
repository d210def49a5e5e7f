#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CoreFoundation
import Foundation

/// The tests a test bundle listed, kept beside it (`asyncharness-listing.json`) so that the
/// next run of the very same bundle lists none: two processes fewer before the first test.
///
/// One key says which bundle and which harness listed them, and how: the bundle's path and file
/// identity (device, inode, size, modification and change times to the nanosecond, which any
/// build that writes it changes), this harness's executable by the same identity, whether the
/// listing asked which Swift Testing tests are serialized, and the environment the listing ran
/// in (a bundle's code runs as it lists, and may read it: a listing that crashes only under
/// some variable must crash again under it). A key that differs, a file that cannot be read,
/// or a listing that failed (it is never kept) means the bundle is listed again.
struct ListingCache {
  /// Where the listing is kept.
  let path: String
  /// What the kept listing must have been listed under.
  let key: String

  /// The cache of `bundle`'s listing, asked `withSerialization` or not, in `environment`; `nil`
  /// when the bundle's identity cannot be read.
  init?(bundle: String, withSerialization: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) {
    guard let identity = Self.identity(of: bundle) else { return nil }
    let harness = Self.identity(of: "/proc/self/exe") ?? CommandLine.arguments.first.flatMap(Self.identity) ?? "unknown"
    path = (bundle as NSString).deletingLastPathComponent + "/asyncharness-listing.json"
    key = "\(Self.format) \(AsyncHarnessVersion.current) \(bundle) \(identity) harness \(harness) "
      + (withSerialization ? "serialization" : "plain") + " environment \(Self.fingerprint(of: environment))"
  }

  /// A fingerprint of `environment` (64-bit FNV-1a of its variables, sorted): the same for the
  /// same variables, whatever their order.
  static func fingerprint(of environment: [String: String]) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for (name, value) in environment.sorted(by: { $0.key < $1.key }) {
      for byte in name.utf8 + [0x3D] + value.utf8 + [0] {
        hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
      }
    }
    return String(hash, radix: 16)
  }

  /// The tests kept for this key, in the order they were listed; `nil` when none are.
  func read() -> [ExistingTest]? {
    guard let data = FileManager.default.contents(atPath: path),
          let kept = try? JSONDecoder().decode(Kept.self, from: data), kept.key == key else { return nil }
    return kept.tests
  }

  /// Keeps `tests`, listed in this order, for this key (replacing what was kept). Nothing is
  /// said when it cannot be written: the next run lists the bundle again.
  func write(_ tests: [ExistingTest]) {
    guard let data = try? JSONEncoder().encode(Kept(key: key, tests: tests)) else { return }
    let temporary = path + ".\(getpid()).tmp"
    guard FileManager.default.createFile(atPath: temporary, contents: data) else { return }
    if rename(temporary, path) != 0 { unlink(temporary) }
  }

  /// The version of the file's layout, raised whenever it changes.
  private static let format = "listing-1"

  /// `path`'s file identity: device, inode, size, and modification and change times to the
  /// nanosecond; `nil` when it cannot be read.
  static func identity(of path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    #if canImport(Darwin)
    let (modified, changed) = (info.st_mtimespec, info.st_ctimespec)
    #else
    let (modified, changed) = (info.st_mtim, info.st_ctim)
    #endif
    return "\(info.st_dev):\(info.st_ino):\(info.st_size):\(modified.tv_sec).\(modified.tv_nsec):\(changed.tv_sec).\(changed.tv_nsec)"
  }

  /// The file: the key, and the tests.
  private struct Kept: Codable {
    var key: String
    var tests: [ExistingTest]
  }
}
