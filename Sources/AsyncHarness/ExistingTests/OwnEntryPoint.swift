import Foundation

/// A test bundle built from an entry point of the package's own (`Tests/LinuxMain.swift`,
/// ``SwiftPMLayout/ownTestEntryPoint(ofBundle:)``). `swift test` runs such a bundle once, with
/// no argument, and takes its exit status as the verdict; it never starts Swift Testing in it.
/// An entry point that calls `XCTMain` lists and runs its XCTest tests as any bundle does; one
/// that does not (Spectre's and PathKit's run their own specs) has no test to list, and runs
/// whole, as one test (``suite``).
struct OwnEntryPoint {
  /// The bundle, an executable.
  let bundle: String
  /// The entry point's source file.
  let source: String

  /// The name of the bundle's one test: the entry point's file name (`LinuxMain.swift`).
  var testName: String { (source as NSString).lastPathComponent }

  /// The bundle's name without `.xctest`: its one test's suite.
  var suiteName: String { ((bundle as NSString).lastPathComponent as NSString).deletingPathExtension }

  /// Whether the entry point calls `XCTMain`, by the object SwiftPM compiled it into, beside
  /// the list of sources it was found in (`<module>.build/LinuxMain.swift.o`): its symbols name
  /// XCTest's `XCTMain` (`$s6XCTest7XCTMain…`). True when the object cannot be read: the bundle
  /// is then listed as any other.
  var callsXCTMain: Bool {
    let module = SwiftPMLayout.mainModuleDirectory(ofBundle: bundle)
    guard let object = FileManager.default.contents(atPath: "\(module)/\(testName).o") else { return true }
    return object.range(of: Data("6XCTest7XCTMain".utf8)) != nil
  }

  /// The suite of one test, ``testName``, that runs the bundle in `directory` as `swift test`
  /// does, with no argument: it passes when the bundle exits with status 0, and fails otherwise
  /// with the last lines the bundle printed (``OutputTail``), its own words; all it printed is
  /// the test's output. It runs in this process.
  func suite(directory: String) -> Suite {
    let bundle = bundle
    let source = source.hasPrefix(directory + "/") ? String(source.dropFirst(directory.count + 1)) : source
    return Suite(suiteName) {
      Test(testName) { t in
        let child = try ChildProcess(executable: bundle, arguments: [], environment: [:], directory: directory,
                                     keepsBacktracer: true)
        let output = child.readOutputToEnd()
        let ending = child.waitForExit()
        FileHandle.standardOutput.write(Data(output))
        guard ending != .exited(0) else { return }
        var tail = OutputTail()
        tail.append(output[...])
        let crashed = if case .signaled = ending { true } else { false }
        t.record(Issue(
          kind: crashed ? .crashed : .expectationFailed,
          message: "The test bundle, whose main is the package's own \(source), ended with \(ending)"
            + OutsideFailure.lastOutput(tail.tail)))
      }
    }
  }
}
