@testable import AsyncHarness
import Foundation
import XCTest

/// Issue 51: `harness test` finds the bin path by SwiftPM's layout, as `swift build
/// --show-bin-path` would print it (each expectation here was checked against SwiftPM 6.3),
/// and asks SwiftPM only for flags that could move it elsewhere.
final class SwiftPMLayoutTests: XCTestCase {
  private let package = "/work/Package"
  private let workingDirectory = "/home/me/src"

  /// The bin path of `package` built with `flags` from `workingDirectory`, without SwiftPM's
  /// environment variables.
  private func binPath(_ flags: [String], environment: [String: String] = [:]) -> SwiftPMLayout.BinPath {
    SwiftPMLayout.binPath(package: package, buildFlags: flags, workingDirectory: workingDirectory, environment: environment)
  }

  func testWithoutFlagsTheProductsAreInThePackagesBuildDebug() {
    XCTAssertEqual(binPath([]), .directory("/work/Package/.build/debug"))
    XCTAssertEqual(binPath(["-c", "debug", "-v"]), .directory("/work/Package/.build/debug"))
  }

  func testAScratchPathIsRelativeToTheWorkingDirectory() {
    XCTAssertEqual(binPath(["--scratch-path", "scratch"]), .directory("/home/me/src/scratch/debug"))
    XCTAssertEqual(binPath(["--scratch-path", "./a/../b/"]), .directory("/home/me/src/b/debug"))
    XCTAssertEqual(binPath(["--scratch-path", "../up"]), .directory("/home/me/up/debug"))
    XCTAssertEqual(binPath(["--scratch-path", "~/x"]), .directory("/home/me/src/~/x/debug"), "no home directory")
  }

  func testAnAbsoluteScratchPathIsItself() {
    XCTAssertEqual(binPath(["--scratch-path", "/tmp/scratch"]), .directory("/tmp/scratch/debug"))
    XCTAssertEqual(binPath(["--scratch-path=/tmp/scratch/"]), .directory("/tmp/scratch/debug"))
  }

  /// `--build-path` is the deprecated name of `--scratch-path`, which wins when both are given.
  func testABuildPathIsAScratchPath() {
    XCTAssertEqual(binPath(["--build-path", "built"]), .directory("/home/me/src/built/debug"))
    XCTAssertEqual(binPath(["--build-path=/tmp/built"]), .directory("/tmp/built/debug"))
    XCTAssertEqual(binPath(["--scratch-path", "s", "--build-path", "b"]), .directory("/home/me/src/s/debug"))
    XCTAssertEqual(binPath(["--build-path", "b", "--scratch-path", "s"]), .directory("/home/me/src/s/debug"))
  }

  func testAReleaseBuildIsInRelease() {
    for flags in [["-c", "release"], ["--configuration", "release"], ["--configuration=release"], ["-c=release"]] {
      XCTAssertEqual(binPath(flags), .directory("/work/Package/.build/release"), "\(flags)")
    }
    XCTAssertEqual(binPath(["--scratch-path", "/s", "-c", "release"]), .directory("/s/release"))
  }

  /// The configuration the flags build, however it is written, the last one given winning;
  /// a value of another option that reads `release` is not one.
  func testTheConfigurationIsTheLastOneGiven() {
    XCTAssertEqual(SwiftPMLayout.configuration(in: []), "debug")
    for flags in [["-c", "release"], ["--configuration", "release"], ["--configuration=release"], ["-c=release"],
                  ["-c", "debug", "-j", "2", "-c", "release"]] {
      XCTAssertEqual(SwiftPMLayout.configuration(in: flags), "release", "\(flags)")
    }
    XCTAssertEqual(SwiftPMLayout.configuration(in: ["-c", "release", "--configuration=debug"]), "debug")
    XCTAssertEqual(SwiftPMLayout.configuration(in: ["--scratch-path", "release", "-Xswiftc", "-c"]), "debug")
  }

  /// As SwiftPM reads an option given twice: the last one wins.
  func testTheLastOfAnOptionGivenTwiceWins() {
    XCTAssertEqual(binPath(["-c", "release", "--configuration", "debug"]), .directory("/work/Package/.build/debug"))
    XCTAssertEqual(binPath(["--scratch-path", "a", "--scratch-path", "b"]), .directory("/home/me/src/b/debug"))
  }

  /// Flags for the compiler, the linker or the job count do not move the products, whatever
  /// their value looks like.
  func testFlagsThatDoNotMoveTheProductsAreSkipped() {
    XCTAssertEqual(binPath(["-Xswiftc", "-warnings-as-errors", "-Xlinker", "--triple", "-j", "2", "--jobs=2", "--quiet"]),
                   .directory("/work/Package/.build/debug"))
  }

  func testAnyOtherFlagAsksSwiftPM() {
    for flags in [
      ["--triple", "x"], ["--swift-sdk", "wasm32-unknown-wasi"], ["--build-system", "swiftbuild"], ["--unknown"],
      ["--package-path", "elsewhere"], ["-c", "Release"], ["-crelease"], ["--scratch-path"], ["--scratch-path="],
      ["--scratch-path", "--triple"], ["-c", "release", "--triple", "x"],
    ] {
      XCTAssertEqual(binPath(flags), .askSwiftPM, "\(flags)")
    }
  }

  /// SwiftPM's build directory from its environment wins over every flag.
  func testSwiftPMsBuildDirectoryFromTheEnvironmentAsksSwiftPM() {
    XCTAssertEqual(binPath([], environment: ["SWIFTPM_BUILD_DIR": "/tmp/elsewhere"]), .askSwiftPM)
  }

  /// `<scratch>/debug` is a link to `<scratch>/<triple>/debug`, the path SwiftPM names.
  func testTheConfigurationsLinkIsFollowedToTheTriplesDirectory() throws {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("swiftpm-layout-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: scratch) }
    try FileManager.default.createDirectory(at: scratch.appendingPathComponent("x86_64-unknown-linux-gnu/debug"),
                                            withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(atPath: scratch.appendingPathComponent("debug").path,
                                               withDestinationPath: "x86_64-unknown-linux-gnu/debug")
    XCTAssertEqual(SwiftPMLayout.followingLink(scratch.appendingPathComponent("debug").path),
                   scratch.appendingPathComponent("x86_64-unknown-linux-gnu/debug").path)
    XCTAssertEqual(SwiftPMLayout.followingLink(scratch.appendingPathComponent("release").path),
                   scratch.appendingPathComponent("release").path, "no link: the path itself")
  }

  /// A bundle built from the package's own `Tests/LinuxMain.swift` (or `XCTMain.swift`) lists
  /// it among the sources of its main module, which SwiftPM names as modules are named
  /// (`CSV.swiftPackageTests` is `CSV_swiftPackageTests`); one SwiftPM generated lists its
  /// `runner.swift`.
  func testTheBundlesOwnEntryPointIsTheOneItsMainModuleWasBuiltFrom() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftpm-layout-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    func bundle(_ name: String, builtFrom sources: [String]) throws -> String {
      let module = directory.appendingPathComponent("\(name.replacingOccurrences(of: ".", with: "_")).build")
      try FileManager.default.createDirectory(at: module, withIntermediateDirectories: true)
      try (sources.joined(separator: "\n") + "\n").write(to: module.appendingPathComponent("sources"), atomically: true,
                                                        encoding: .utf8)
      return directory.appendingPathComponent("\(name).xctest").path
    }
    XCTAssertEqual(SwiftPMLayout.ownTestEntryPoint(ofBundle: try bundle("InkPackageTests", builtFrom: ["/p/Tests/LinuxMain.swift"])),
                   "/p/Tests/LinuxMain.swift")
    XCTAssertEqual(SwiftPMLayout.ownTestEntryPoint(ofBundle: try bundle("CSV.swiftPackageTests", builtFrom: ["/p/Tests/XCTMain.swift"])),
                   "/p/Tests/XCTMain.swift")
    XCTAssertNil(SwiftPMLayout.ownTestEntryPoint(ofBundle: try bundle("PlotPackageTests", builtFrom: [
      "/p/.build/x86_64-unknown-linux-gnu/debug/PlotPackageTests.derived/runner.swift",
    ])))
    XCTAssertNil(SwiftPMLayout.ownTestEntryPoint(ofBundle: directory.appendingPathComponent("NonePackageTests.xctest").path),
                 "no list of sources: SwiftPM's own entry point")
  }
}
