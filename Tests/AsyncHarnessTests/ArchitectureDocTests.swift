@testable @_spi(ForToolsIntegrationOnly) import AsyncHarness
import Foundation
import XCTest

/// The worker's README (`Sources/AsyncHarness/Executors/Worker/README.md`, which
/// docs/ARCHITECTURE.md links) shows sample lines of the worker protocol in its section "The
/// protocol": each must be a line the worker protocol's real decoder reads, and encoding what it
/// read must write the same fields with the same values, so the page cannot drift from the code
/// (a field the encoder does not write, a missing one, another version all fail here).
final class ArchitectureDocTests: XCTestCase {
  /// The samples of the code block that follows the heading "## The protocol": each starts at a
  /// `{` and runs on until its braces close, its lines joined by one space.
  private func protocolSamples() throws -> [String] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent("Sources/AsyncHarness/Executors/Worker/README.md"),
                          encoding: .utf8)
    let section = try XCTUnwrap(text.range(of: "\n## The protocol\n"), "no protocol section")
    let blocks = text[section.upperBound...].components(separatedBy: "```")
    XCTAssertGreaterThan(blocks.count, 2, "the protocol section has no code block")
    var samples: [String] = []
    var sample = ""
    var depth = 0
    var inString = false
    var escaped = false
    for line in blocks[1].split(separator: "\n") {
      let rest = depth == 0 ? line.firstIndex(of: "{").map { line[$0...] } : line.drop { $0 == " " }
      guard let rest else { continue }
      if depth > 0 { sample += " " }
      for character in rest where depth > 0 || character == "{" {
        sample.append(character)
        if escaped { escaped = false } else if inString { escaped = character == "\\"; inString = character != "\"" }
        else if character == "\"" { inString = true }
        else if character == "{" { depth += 1 }
        else if character == "}" {
          depth -= 1
          if depth == 0 { samples.append(sample); sample = "" }
        }
      }
    }
    XCTAssertEqual(depth, 0, "a sample's braces never close: \(sample)")
    return samples
  }

  /// What the real encoder writes for the value the real decoder reads from `sample`, and
  /// what the sample is (a request, a reply or an event, by name).
  private func reencoded(_ sample: String) throws -> (line: [UInt8], kind: String) {
    let bytes = Array(sample.utf8)
    if try XCTUnwrap(JSONFields(XCTUnwrap(JSONValue.parse(bytes), "not JSON: \(sample)"))).optional("request") != nil {
      let request = try WorkerRequest(line: bytes)
      let name = switch request { case .run: "run"; case .start: "start"; case .resume: "resume"; case .stop: "stop" }
      return (request.line, "request \(name)")
    }
    switch try WorkerMessage(line: bytes) {
    case .event(let event):
      return (event.jsonLineBytes, "event")
    case .mark(let mark):
      var line = JSONText()
      mark.write(to: &line)
      return (line.array, "mark \(mark.kind.name)")
    case .reply(let reply):
      let name = switch reply { case .returned: "returned"; case .cannotRun: "cannotRun"; case .crashing: "crashing" }
      return (reply.line, "reply \(name)")
    }
  }

  func testEveryProtocolSampleDecodesAndEncodesBackToItsFields() throws {
    let samples = try protocolSamples()
    var kinds: Set<String> = []
    for sample in samples {
      let (line, kind) = try reencoded(sample)
      kinds.insert(kind)
      XCTAssertEqual(JSONValue.parse(line), JSONValue.parse(Array(sample.utf8)),
                     "Executors/Worker/README.md shows\n\(sample)\nthe encoder writes\n\(String(decoding: line, as: UTF8.self))")
    }
    XCTAssertEqual(kinds, ["request run", "request start", "request resume", "request stop", "event", "mark wait", "mark step",
                          "reply returned", "reply cannotRun", "reply crashing"])
  }

  /// The samples show every field a `returned` reply and a `run` request can carry.
  func testTheSamplesShowEveryFieldOfAReplyAndARequest() throws {
    var fields: [String: Set<String>] = [:]
    for sample in try protocolSamples() {
      guard case .object(let object) = JSONValue.parse(Array(sample.utf8)) else { continue }
      let key = ["request", "reply"].lazy.compactMap { key -> String? in
        if case .string(let name) = object[key] { "\(key) \(name)" } else { nil }
      }.first ?? "event"
      fields[key, default: []].formUnion(object.keys)
      if key.hasPrefix("request"), case .object(let planned) = object["test"] { fields["planned test", default: []].formUnion(planned.keys) }
    }
    let id = TestID(suite: "S", name: "t", host: "scheduled", schedule: "7:pct3:9f2c1a")
    let reply = WorkerReply.returned(id, duration: 1, trace: ScheduleTrace(steps: 41, fingerprint: 0x0be311, firstOutsideStep: 12),
                                     paused: true, retire: .exceededTimeLimit)
    guard case .object(let written) = JSONValue.parse(reply.line) else { return XCTFail("not an object") }
    XCTAssertEqual(fields["reply returned"], Set(written.keys))
    var configuration = Configuration()
    configuration.timeLimit = .seconds(3)
    configuration.jitter = Jitter(seed: 7)
    configuration.reportsWaits = true
    let plan = try Runner.Plan(suites: [Suite("S") { Test("t") { _ in } }], configuration: configuration, registry: .builtIn)
    let planned = try XCTUnwrap(plan.plannedTests(of: plan.entries[0], repetition: 1).first)
    guard case .object(let request) = JSONValue.parse(WorkerRequest.run(WorkerRunRequest(planned, ref: 1)).line),
          case .object(let plannedFields) = request["test"] else { return XCTFail("not an object") }
    XCTAssertEqual(fields["request run"], Set(request.keys))
    XCTAssertEqual(fields["planned test"], Set(plannedFields.keys))
  }
}
