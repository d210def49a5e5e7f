// swift-tools-version: 6.0
import PackageDescription

// The examples are their own package so that their dependencies (GRDB for PinacotecaCore's
// database, FlyingFox for the fixture server) never reach users of AsyncHarness.
let package = Package(
  name: "AsyncHarnessExamples",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "examples", targets: ["examples"]),
    .executable(name: "pinacoteca-server", targets: ["pinacoteca-server"]),
  ],
  dependencies: [
    .package(name: "AsyncHarness", path: ".."),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
  ],
  targets: [
    // The code under test.
    .target(
      name: "PinacotecaCore",
      dependencies: [.product(name: "AsyncHarness", package: "AsyncHarness"), .product(name: "GRDB", package: "GRDB.swift")],
      path: "PinacotecaCore"
    ),
    .target(name: "PinacotecaFixtures", path: "PinacotecaFixtures", resources: [.copy("Fixtures")]),
    .target(
      name: "PinacotecaServer",
      dependencies: [
        "PinacotecaFixtures",
        .product(name: "FlyingFox", package: "FlyingFox"),
        .product(name: "FlyingSocks", package: "FlyingFox"),
      ],
      path: "PinacotecaServer"
    ),
    .executableTarget(name: "pinacoteca-server", dependencies: ["PinacotecaServer"], path: "pinacoteca-server"),
    .target(name: "MessageLoader", dependencies: [.product(name: "AsyncHarness", package: "AsyncHarness")],
            path: "MessageLoader/Sources"),
    .target(name: "Stories", dependencies: [.product(name: "AsyncHarness", package: "AsyncHarness")],
            path: "Stories/Sources"),

    // Their suites and the runner.
    .target(name: "ExampleSupport", dependencies: [.product(name: "AsyncHarness", package: "AsyncHarness")],
            path: "ExampleSupport"),
    .target(
      name: "PinacotecaSuites",
      dependencies: [
        .product(name: "AsyncHarness", package: "AsyncHarness"),
        "ExampleSupport", "PinacotecaCore", "PinacotecaFixtures", "PinacotecaServer",
      ],
      path: "PinacotecaSuites"
    ),
    .target(
      name: "MessageLoaderSuites",
      dependencies: [.product(name: "AsyncHarness", package: "AsyncHarness"), "ExampleSupport", "MessageLoader"],
      path: "MessageLoader/Suites"
    ),
    .target(
      name: "StoriesSuites",
      dependencies: [.product(name: "AsyncHarness", package: "AsyncHarness"), "ExampleSupport", "Stories"],
      path: "Stories/Suites"
    ),
    .target(
      name: "ExampleSuites",
      dependencies: [
        .product(name: "AsyncHarness", package: "AsyncHarness"),
        "PinacotecaSuites", "MessageLoaderSuites", "StoriesSuites",
      ],
      path: "ExampleSuites"
    ),
    .executableTarget(
      name: "examples",
      dependencies: [
        .product(name: "AsyncHarness", package: "AsyncHarness"),
        .product(name: "AsyncHarnessJUnit", package: "AsyncHarness"),
        "ExampleSuites",
      ],
      path: "examples"
    ),
    .testTarget(
      name: "ExamplesTests",
      dependencies: [
        .product(name: "AsyncHarness", package: "AsyncHarness"),
        "ExampleSuites", "ExampleSupport", "PinacotecaCore", "PinacotecaFixtures", "PinacotecaSuites", "StoriesSuites",
        .product(name: "GRDB", package: "GRDB.swift"),
      ]
    ),
    // The callback stories (Pinacoteca, MessageLoader, a few Stories) tested as an app team
    // would, in plain XCTest on real Dispatch queues: what `.ci/test` runs under
    // `harness test --explore 20` (issue 50).
    .testTarget(
      name: "CallbackStoriesXCTests",
      dependencies: [
        .product(name: "AsyncHarness", package: "AsyncHarness"),
        "PinacotecaCore", "PinacotecaFixtures", "MessageLoader", "Stories",
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
