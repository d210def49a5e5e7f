// swift-tools-version: 6.0
// A package whose test target holds no test: an XCTest class without a test method, and no
// Swift Testing test. `swift test` passes it (`Executed 0 tests`, `Test run with 0 tests`, exit
// status 0), and so does `harness test`.
import PackageDescription

let package = Package(
  name: "NoTests",
  targets: [
    .target(name: "Empty"),
    .testTarget(name: "EmptyTests", dependencies: ["Empty"]),
  ]
)
