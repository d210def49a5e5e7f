// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "AsyncHarness",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "AsyncHarness", targets: ["AsyncHarness"]),
    .executable(name: "examples", targets: ["examples"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    // Examples: PinacotecaCore's database and the loopback fixture server.
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
  ],
  targets: [
    .target(
      name: "AsyncHarness",
      dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),

    // MARK: Examples (issue 4): the code under test, its suites, and the runners.
    .target(
      name: "PinacotecaCore",
      dependencies: ["AsyncHarness", .product(name: "GRDB", package: "GRDB.swift")],
      path: "Examples/PinacotecaCore"
    ),
    .target(
      name: "PinacotecaFixtures",
      path: "Examples/PinacotecaFixtures",
      resources: [.copy("Fixtures")]
    ),
    .target(
      name: "PinacotecaServer",
      dependencies: [
        "PinacotecaFixtures",
        .product(name: "FlyingFox", package: "FlyingFox"),
        .product(name: "FlyingSocks", package: "FlyingFox"),
      ],
      path: "Examples/PinacotecaServer"
    ),
    .executableTarget(
      name: "pinacoteca-server",
      dependencies: ["PinacotecaServer"],
      path: "Examples/pinacoteca-server"
    ),
    .target(name: "ExampleSupport", dependencies: ["AsyncHarness"], path: "Examples/ExampleSupport"),
    .target(
      name: "PinacotecaSuites",
      dependencies: ["AsyncHarness", "ExampleSupport", "PinacotecaCore", "PinacotecaFixtures", "PinacotecaServer"],
      path: "Examples/PinacotecaSuites"
    ),
    .target(name: "MessageLoader", dependencies: ["AsyncHarness"], path: "Examples/MessageLoader/Sources"),
    .target(
      name: "MessageLoaderSuites",
      dependencies: ["AsyncHarness", "ExampleSupport", "MessageLoader"],
      path: "Examples/MessageLoader/Suites"
    ),
    .target(name: "Stories", dependencies: ["AsyncHarness"], path: "Examples/Stories/Sources"),
    .target(
      name: "StoriesSuites",
      dependencies: ["AsyncHarness", "ExampleSupport", "Stories"],
      path: "Examples/Stories/Suites"
    ),
    .target(
      name: "ExampleSuites",
      dependencies: ["AsyncHarness", "PinacotecaSuites", "MessageLoaderSuites", "StoriesSuites"],
      path: "Examples/ExampleSuites"
    ),
    .executableTarget(name: "examples", dependencies: ["AsyncHarness", "ExampleSuites"], path: "Examples/examples"),
    .testTarget(
      name: "ExamplesTests",
      dependencies: ["AsyncHarness", "ExampleSuites", "PinacotecaCore", "PinacotecaFixtures", "PinacotecaSuites"]
    ),
  ]
)

// Shared settings for every target: Swift 6 mode is the tools-version default;
// these keep imports and existentials explicit.
for target in package.targets where target.type != .system && target.type != .plugin {
  target.swiftSettings = (target.swiftSettings ?? []) + [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
  ]
}
