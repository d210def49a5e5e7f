// swift-tools-version:5.9
import PackageDescription

// A package whose test bundle's entry point, Tests/LinuxMain.swift, runs checks of its own and
// never calls XCTMain, as Spectre's and PathKit's run their specs: see README.md.
let package = Package(
  name: "OwnMain",
  targets: [.testTarget(name: "ChecksTests")]
)
