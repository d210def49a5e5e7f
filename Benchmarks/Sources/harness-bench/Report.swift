import Foundation

/// One line of the comparison table: our figure beside an anchor's (lower is better).
struct Row {
  var label: String
  var ours: Double?
  var anchorLabel: String
  var anchor: Double?
  var unit: String

  /// Ours divided by the anchor's: above 1, we are behind.
  var ratio: Double? {
    guard let ours, let anchor, anchor > 0 else { return nil }
    return ours / anchor
  }
}

/// Collects the figures of a run and prints them.
final class Report {
  private var rows: [Row] = []
  private var notes: [String] = []

  func add(_ row: Row) { rows.append(row) }
  func note(_ text: String) { notes.append(text) }

  func section(_ title: String) {
    print("\n## \(title)")
    fflush(nil)
  }

  /// Prints one line of the wake-latency detail table, as soon as it is measured.
  func latencyLine(_ label: String, _ stats: LatencyStats, failures: Int) {
    let figures = [stats.p50, stats.p99, stats.p999, stats.max].map { format($0) }
    let cells = [pad(label, 54), pad("\(stats.count)", 7, right: true)]
      + figures.map { pad($0, 9, right: true) }
      + [pad("\(stats.over1ms)", 6, right: true), pad("\(stats.over50ms)", 6, right: true),
         failures > 0 ? "  \(failures) FAILED" : ""]
    print(cells.joined(separator: " "))
    fflush(nil)
  }

  func latencyHeader() {
    let cells = [pad("wait (µs)", 54), pad("waits", 7, right: true)]
      + ["p50", "p99", "p99.9", "max"].map { pad($0, 9, right: true) }
      + [pad(">1ms", 6, right: true), pad(">50ms", 6, right: true)]
    print(cells.joined(separator: " "))
  }

  /// Prints the comparison table and, last, the worst ratio.
  func printTable() {
    print("\n## Comparison (lower is better; ratio = ours / anchor, above 1 = behind)")
    print([pad("row", 50), pad("ours", 10, right: true), pad("unit", 6), pad("anchor", 34),
           pad("anchor's", 10, right: true), pad("ratio", 7, right: true)].joined(separator: " "))
    for row in rows {
      print([pad(row.label, 50), pad(row.ours.map { format($0) } ?? "—", 10, right: true), pad(row.unit, 6),
             pad(row.anchorLabel, 34), pad(row.anchor.map { format($0) } ?? "—", 10, right: true),
             pad(row.ratio.map { String(format: "%.2f", $0) } ?? "—", 7, right: true)].joined(separator: " "))
    }
    for text in notes { print("note: \(text)") }
    if let worst = rows.filter({ $0.ratio != nil }).max(by: { $0.ratio! < $1.ratio! }), let ratio = worst.ratio {
      print(String(format: "worst ratio: %.2f× — %@ (%@ %@ vs %@ %@)", ratio, worst.label,
                   format(worst.ours!), worst.unit, worst.anchorLabel, format(worst.anchor!)))
    }
    fflush(nil)
  }

  private func format(_ value: Double) -> String {
    if value.isNaN { return "—" }
    if value >= 1000 { return String(format: "%.0f", value) }
    if value >= 10 { return String(format: "%.1f", value) }
    return String(format: "%.2f", value)
  }

  private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let count = text.count
    guard count < width else { return text }
    let space = String(repeating: " ", count: width - count)
    return right ? space + text : text + space
  }
}
