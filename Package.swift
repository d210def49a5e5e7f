// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "AsyncHarness",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "AsyncHarness", targets: ["AsyncHarness"]),
    .library(name: "AsyncHarnessConformance", targets: ["AsyncHarnessConformance"]),
    .library(name: "AsyncHarnessXCTest", targets: ["AsyncHarnessXCTest"]),
    .library(name: "AsyncHarnessXCTestJUnit", targets: ["AsyncHarnessXCTestJUnit"]),
    .library(name: "AsyncHarnessTesting", targets: ["AsyncHarnessTesting"]),
    .plugin(name: "HarnessPlugin", targets: ["HarnessPlugin"]),
    .library(name: "AsyncHarnessJUnit", targets: ["AsyncHarnessJUnit"]),
    .executable(name: "harness-junit", targets: ["harness-junit"]),
    .executable(name: "harness", targets: ["harness"]),
  ],
  dependencies: [
    // The only one: the examples (Examples/) and the benchmarks (Benchmarks/) are packages of
    // their own, so what they use never reaches a package that depends on AsyncHarness.
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
  ],
  targets: [
    .target(
      name: "AsyncHarness",
      dependencies: ["AsyncHarnessShared", .product(name: "ArgumentParser", package: "swift-argument-parser")],
      // The READMEs beside the code (docs/ARCHITECTURE.md links them) are no part of the build.
      exclude: ["Shared", "Running/README.md", "Executors/README.md", "Executors/Worker/README.md",
                "Executors/Supervision/README.md", "Executors/Bundle/README.md", "Scheduling/README.md",
                "Reporting/README.md", "ExistingTests/BundleChannel/README.md"],
      // The library `harness test` compiles with a package's own toolchain and preloads into
      // its test bundle (its channel, and its schedules under --explore): embedded as text,
      // never compiled into AsyncHarness; with it, the sources it shares with the core.
      resources: [
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleChannel.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleXCTestObserver.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleExplorer.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleDispatch.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleOutsideWork.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleScheduleState.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleDispatchQueues.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleExecutors.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleDiscovery.swift"),
        .embedInCode("ExistingTests/BundleChannel/AsyncHarnessBundleWorkLeft.swift"),
        .embedInCode("Shared/SchedulePicking.swift"),
        .embedInCode("Shared/ReadyOrder.swift"),
        .embedInCode("Shared/ChannelRecord.swift"),
        .embedInCode("Shared/ChannelRecord+Reading.swift"),
        .embedInCode("Shared/RoutedExecutors.swift"),
        .embedInCode("Shared/JSONEscape.swift"),
        .embedInCode("Shared/LineSplitter.swift"),
      ]
    ),
    // What the core and the library preloaded into a package's test bundle share, compiled
    // into both from one source (Sources/AsyncHarness/Shared): a schedule's choices, the
    // channel's records, the executors both schedules install. No dependency.
    .target(name: "AsyncHarnessShared", path: "Sources/AsyncHarness/Shared"),
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
    .target(name: "HarnessTestSupport", dependencies: ["AsyncHarness"], path: "Tests/HarnessTestSupport"),
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
        "AsyncHarness", "AsyncHarnessJUnit",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // `harness test`: a package's own tests under the harness.
    .executableTarget(name: "harness", dependencies: ["AsyncHarness", "AsyncHarnessJUnit"]),
    // XCTest runs as JUnit, apart from AsyncHarnessXCTest so that only those who want JUnit
    // link libxml2; the loader registers its observer when the test executable loads.
    .target(
      name: "AsyncHarnessXCTestJUnit",
      dependencies: ["AsyncHarness", "AsyncHarnessXCTest", "AsyncHarnessJUnit", "AsyncHarnessXCTestJUnitLoader"]
    ),
    .target(name: "AsyncHarnessXCTestJUnitLoader"),
    .executableTarget(name: "junit-bench", dependencies: ["AsyncHarness", "AsyncHarnessJUnit"]),
    .testTarget(name: "AsyncHarnessJUnitTests", dependencies: ["AsyncHarness", "AsyncHarnessJUnit", "HarnessTestSupport"]),
    // A suites executable that the JUnit tests interrupt with real signals.
    .executableTarget(
      name: "harness-fixture", dependencies: ["AsyncHarness", "AsyncHarnessJUnit"], path: "Tests/Fixtures/harness-fixture"),
    // Ordinary but rude test code (reads stdin, starts processes, closes descriptors, …) that
    // worker isolation must keep invisible.
    .executableTarget(
      name: "harness-rude-fixture", dependencies: ["AsyncHarness", "AsyncHarnessJUnit"],
      path: "Tests/Fixtures/harness-rude-fixture"),
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

// Documentation: `ASYNCHARNESS_DOCC=1 swift package generate-documentation` (see .ci/docs).
// Only with the variable set does the package depend on the DocC plugin, so a package that
// depends on AsyncHarness never resolves it.
if Context.environment["ASYNCHARNESS_DOCC"] != nil {
  package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
