import Foundation

/// Runs the package's checks, printing each as a spec runner does; false when one failed
/// (with OWN_ENTRY_POINT_FAIL=1, the second does).
public func runChecks() -> Bool {
  print("-> greetings")
  print("  -> greet by name")
  guard ProcessInfo.processInfo.environment["OWN_ENTRY_POINT_FAIL"] == "1" else {
    print("  -> greet nobody\n\n2 passes and 0 failures")
    return true
  }
  print("  -> greet nobody\n\n greetings greet nobody\n  Checks.swift:13 \"Hello, \" is not equal to \"Hello\"\n")
  print("1 passes and 1 failures")
  return false
}
