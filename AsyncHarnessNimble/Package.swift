// swift-tools-version: 6.0
import PackageDescription

// The Nimble adapter is a package of its own so that only its users resolve Nimble: a
// package that depends on AsyncHarness alone never does.
let package = Package(
  name: "AsyncHarnessNimble",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "AsyncHarnessNimble", targets: ["AsyncHarnessNimble"]),
  ],
  dependencies: [
    .package(name: "AsyncHarness", path: ".."),
    .package(url: "https://github.com/Quick/Nimble", from: "14.0.0"),
  ],
  targets: [
    .target(
      name: "AsyncHarnessNimble",
      dependencies: [
        .product(name: "AsyncHarness", package: "AsyncHarness"),
        .product(name: "Nimble", package: "Nimble"),
      ]
    ),
    .testTarget(
      name: "AsyncHarnessNimbleTests",
      dependencies: [
        "AsyncHarnessNimble",
        .product(name: "AsyncHarness", package: "AsyncHarness"),
        .product(name: "Nimble", package: "Nimble"),
      ]
    ),
  ]
)

// The root package's shared settings, for every target.
for target in package.targets {
  target.swiftSettings = (target.swiftSettings ?? []) + [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
  ]
}
