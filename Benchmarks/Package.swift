// swift-tools-version: 6.0
import PackageDescription

// The benchmarks are their own package so that Nimble and the other comparison-only
// dependencies never reach users of AsyncHarness.
let package = Package(
  name: "AsyncHarnessBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "AsyncHarness", path: ".."),
    .package(url: "https://github.com/Quick/Nimble", exact: "14.0.0"),
  ],
  targets: [
    .executableTarget(
      name: "harness-bench",
      dependencies: [
        .product(name: "AsyncHarness", package: "AsyncHarness"),
        .product(name: "AsyncHarnessJUnit", package: "AsyncHarness"),
        .product(name: "Nimble", package: "Nimble"),
        // Not linked: built beside harness-bench (in release with it), which part 10 runs.
        .product(name: "harness", package: "AsyncHarness"),
      ],
      swiftSettings: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
      ]
    ),
  ]
)
