// swift-tools-version:5.9
import PackageDescription

// A package whose test bundle is built from an entry point of its own, Tests/LinuxMain.swift,
// as older packages (Ink, SwiftGraph, ZIPFoundation) still have: see README.md.
let package = Package(
  name: "OwnEntryPoint",
  products: [.library(name: "Greeting", targets: ["Greeting"])],
  targets: [
    .target(name: "Greeting"),
    .testTarget(name: "GreetingTests", dependencies: ["Greeting"]),
  ]
)
