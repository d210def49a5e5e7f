// swift-tools-version: 6.0
// Ordinary async code with four ordering bugs, each beside a fixed twin, and the XCTest and
// Swift Testing tests a team would write for them: what `harness test --explore N` (issue 41)
// is checked against. It does not depend on AsyncHarness. See README.md.
import PackageDescription

let package = Package(
  name: "OrderingBugs",
  platforms: [.macOS(.v15)],
  targets: [
    .target(name: "Orders"),
    .testTarget(name: "OrdersTests", dependencies: ["Orders"]),
  ]
)
