// swift-tools-version: 6.0
// A package with plain XCTest, HarnessTestCase and Swift Testing tests, run as a child
// `swift test` by AsyncHarnessJUnitTests (BridgeReportTests) to check the JUnit reports of
// the bridges. The tests copy it to .build/fixtures/BridgesFixture, beside a link named
// AsyncHarness to the checkout, and build it with a scratch path of its own.
import PackageDescription

let package = Package(
  name: "BridgesFixture",
  platforms: [.macOS(.v15)],
  dependencies: [.package(path: "../AsyncHarness")],
  targets: [
    .testTarget(name: "FixtureXCTests", dependencies: [
      .product(name: "AsyncHarnessXCTest", package: "AsyncHarness"),
      .product(name: "AsyncHarnessXCTestJUnit", package: "AsyncHarness"),
    ]),
    .testTarget(name: "FixtureSwiftTests"),
  ]
)
