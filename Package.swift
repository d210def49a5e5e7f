// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "AsyncHarness",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "AsyncHarness", targets: ["AsyncHarness"]),
    .library(name: "AsyncHarnessConformance", targets: ["AsyncHarnessConformance"]),
    .library(name: "AsyncHarnessXCTest", targets: ["AsyncHarnessXCTest"]),
    .library(name: "AsyncHarnessTesting", targets: ["AsyncHarnessTesting"]),
    .executable(name: "examples", targets: ["examples"]),
    .plugin(name: "HarnessPlugin", targets: ["HarnessPlugin"]),
    .library(name: "AsyncHarnessJUnit", targets: ["AsyncHarnessJUnit"]),
    .executable(name: "harness-junit", targets: ["harness-junit"]),
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
    .target(name: "AsyncHarnessConformance", dependencies: ["AsyncHarness"]),
    .target(name: "AsyncHarnessXCTest", dependencies: ["AsyncHarness"]),
    .target(name: "AsyncHarnessTesting", dependencies: ["AsyncHarness"]),
    .testTarget(
      name: "AsyncHarnessTests",
      dependencies: [
        "AsyncHarness", "AsyncHarnessConformance", "AsyncHarnessXCTest", "AsyncHarnessTesting", "HarnessTestSupport",
      ]
    ),
    // What the test targets share.
    .target(name: "HarnessTestSupport", path: "Tests/HarnessTestSupport"),
    .plugin(
      name: "HarnessPlugin",
      capability: .command(
        intent: .custom(verb: "harness", description: "Build and run the suite executables, writing JUnit reports"),
        permissions: [.writeToPackageDirectory(reason: "The JUnit reports are written to .build/reports")]
      )
    ),
    .systemLibrary(
      name: "CLibXML2",
      pkgConfig: "libxml-2.0",
      providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
    ),
    .target(name: "AsyncHarnessJUnit", dependencies: ["AsyncHarness", "CLibXML2"]),
    .executableTarget(
      name: "harness-junit",
      dependencies: [
        "AsyncHarnessJUnit",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    .executableTarget(name: "junit-bench", dependencies: ["AsyncHarness", "AsyncHarnessJUnit"]),
    .testTarget(name: "AsyncHarnessJUnitTests", dependencies: ["AsyncHarness", "AsyncHarnessJUnit", "HarnessTestSupport"]),
    // A suites executable that the JUnit tests interrupt with real signals.
    .executableTarget(
      name: "harness-fixture", dependencies: ["AsyncHarness", "AsyncHarnessJUnit"], path: "Tests/Fixtures/harness-fixture"),

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
    .executableTarget(
      name: "examples",
      dependencies: ["AsyncHarness", "AsyncHarnessJUnit", "ExampleSuites"],
      path: "Examples/examples"
    ),
    .testTarget(
      name: "ExamplesTests",
      dependencies: [
        "AsyncHarness", "ExampleSuites", "ExampleSupport", "PinacotecaCore", "PinacotecaFixtures",
        "PinacotecaSuites", "StoriesSuites",
        .product(name: "GRDB", package: "GRDB.swift"),
      ]
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
