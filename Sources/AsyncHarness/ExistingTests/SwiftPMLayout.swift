import Foundation

/// Where SwiftPM puts a package's built products, read from its documented layout instead of
/// asking it (`swift build --show-bin-path`, a start of SwiftPM of 200–400 ms): the scratch
/// path (`--scratch-path`, else its deprecated alias `--build-path`, else the package's
/// `.build`), then the configuration, `<scratch>/debug` or `<scratch>/release`: on Linux and
/// macOS a link to `<scratch>/<triple>/<configuration>`, which the build points at the
/// products it made.
///
/// Build flags it does not know could move the products (`--triple`, `--swift-sdk`,
/// `--build-system` …), and so could `SWIFTPM_BUILD_DIR`: with any of them, the bin path is
/// SwiftPM's to say.
enum SwiftPMLayout {
  /// Where a build's products are.
  enum BinPath: Equatable {
    /// In this directory, by SwiftPM's layout (`<scratch>/<configuration>`).
    case directory(String)
    /// Where `swift build --show-bin-path` says, given the same flags.
    case askSwiftPM
  }

  /// What a build option that takes a value is to the bin path.
  private enum Option {
    case scratchPath, buildPath, configuration
    /// It does not move the products (a job count, a flag for the compiler or the linker).
    case elsewhere
  }

  /// The options with a value SwiftPM's layout knows, by name. A long option, and `-c`, may
  /// also be written `NAME=VALUE`.
  private static let options: [String: Option] = [
    "--scratch-path": .scratchPath, "--build-path": .buildPath, "-c": .configuration, "--configuration": .configuration,
    "-j": .elsewhere, "--jobs": .elsewhere, "-Xswiftc": .elsewhere, "-Xcc": .elsewhere, "-Xcxx": .elsewhere,
    "-Xlinker": .elsewhere,
  ]
  /// The flags without a value that do not move the products.
  private static let switches: Set<String> = [
    "-v", "--verbose", "--very-verbose", "--vv", "-q", "--quiet", "--build-tests", "--disable-sandbox",
  ]
  /// The configurations SwiftPM builds.
  private static let configurations: Set<String> = ["debug", "release"]

  /// The bin path of the package in the absolute directory `package` built with `buildFlags`
  /// (those after `--`, without `--package-path`) by a SwiftPM started in `workingDirectory`
  /// with `environment`: as SwiftPM reads them, the last of an option given twice wins,
  /// `--scratch-path` wins over `--build-path`, and a relative path is relative to the working
  /// directory. Anything else that could move the products asks SwiftPM.
  static func binPath(package: String, buildFlags: [String], workingDirectory: String,
                      environment: [String: String]) -> BinPath {
    guard environment["SWIFTPM_BUILD_DIR"] == nil else { return .askSwiftPM }
    var values: [Option: String] = [:]
    var flags = buildFlags[...]
    while let flag = flags.popFirst() {
      if switches.contains(flag) { continue }
      let (name, joined) = split(flag)
      guard let option = options[name], let value = joined ?? flags.popFirst(), !value.isEmpty,
        option == .elsewhere || !value.hasPrefix("-")
      else { return .askSwiftPM }
      values[option] = value
    }
    let configuration = values[.configuration] ?? "debug"
    guard configurations.contains(configuration) else { return .askSwiftPM }
    let scratch = (values[.scratchPath] ?? values[.buildPath]).map { absolute($0, in: workingDirectory) }
      ?? absolute(".build", in: package)
    return .directory(absolute(configuration, in: scratch))
  }

  /// The configuration `buildFlags` build (`-c`, `--configuration`; the last one given wins),
  /// `debug` when they name none.
  static func configuration(in buildFlags: [String]) -> String {
    var configuration = "debug"
    var flags = buildFlags[...]
    while let flag = flags.popFirst() {
      let (name, joined) = split(flag)
      guard options[name] == .configuration, let value = joined ?? flags.popFirst() else { continue }
      configuration = value
    }
    return configuration
  }

  /// `directory` (`<scratch>/<configuration>`) with its link followed, as SwiftPM names it
  /// (`<scratch>/<triple>/<configuration>`); itself when it is no link.
  static func followingLink(_ directory: String) -> String {
    guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: directory) else { return directory }
    return absolute(destination, in: (directory as NSString).deletingLastPathComponent)
  }

  /// The names SwiftPM gives a test entry point a package writes itself, in a test directory
  /// (`Tests/LinuxMain.swift`): the bundle is built from it instead of the one SwiftPM generates.
  static let testEntryPointNames: Set<String> = ["XCTMain.swift", "LinuxMain.swift"]

  /// The test entry point of the package's own that the test bundle at `bundle` was built from,
  /// by the list of sources SwiftPM compiled into the bundle's main module, beside it
  /// (`<module>.build/sources`, the module named for the bundle as SwiftPM names modules:
  /// `CSV.swiftPackageTests` is `CSV_swiftPackageTests`); `nil` when SwiftPM generated the entry
  /// point (`<bundle>.derived/runner.swift`) or the build left no such list.
  static func ownTestEntryPoint(ofBundle bundle: String) -> String? {
    guard let list = try? String(contentsOfFile: "\(mainModuleDirectory(ofBundle: bundle))/sources", encoding: .utf8)
    else { return nil }
    return list.split(separator: "\n").map(String.init)
      .first { testEntryPointNames.contains(($0 as NSString).lastPathComponent) }
  }

  /// The directory of the build of the bundle's main module (`<module>.build`, beside it).
  static func mainModuleDirectory(ofBundle bundle: String) -> String {
    let name = ((bundle as NSString).lastPathComponent as NSString).deletingPathExtension
    let module = String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    return "\((bundle as NSString).deletingLastPathComponent)/\(module).build"
  }

  /// `--name=value` (or `-c=value`) as its name and value; any other flag as itself, with no value.
  private static func split(_ flag: String) -> (name: String, value: String?) {
    guard flag.hasPrefix("--") || flag.hasPrefix("-c="), let equals = flag.firstIndex(of: "=") else { return (flag, nil) }
    return (String(flag[..<equals]), String(flag[flag.index(after: equals)...]))
  }

  /// `path` made absolute against `directory` and its `.` and `..` taken out, as SwiftPM does
  /// (a leading `~` is a directory's name, not the home directory).
  private static func absolute(_ path: String, in directory: String) -> String {
    URL(fileURLWithPath: path.hasPrefix("/") ? path : "\(directory)/\(path)").standardizedFileURL.path
  }
}
