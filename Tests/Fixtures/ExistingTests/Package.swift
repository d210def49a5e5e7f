// swift-tools-version: 6.0
// A package with the tests a team already has, XCTest and Swift Testing side by side in one
// test target, for `harness test` (issue 32) to list and run. It does not depend on
// AsyncHarness. The tests that crash, exit or hang do so only with EXISTING_TESTS_RUDE=1:
// see README.md.
import PackageDescription

let package = Package(
  name: "ExistingTests",
  platforms: [.macOS(.v15)],
  products: [.library(name: "Ledger", targets: ["Ledger"])],
  targets: [
    .target(name: "Ledger"),
    .testTarget(name: "LedgerTests", dependencies: ["Ledger"]),
  ]
)
