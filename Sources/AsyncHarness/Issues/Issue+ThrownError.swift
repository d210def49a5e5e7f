extension Issue {
  /// The issue for an error that ended a test body, a set-up or a teardown block:
  /// `Caught error: ` followed by the error as its author wrote it.
  static func thrown(_ error: any Error, at location: SourceLocation) -> Issue {
    Issue(kind: .errorThrown, message: "Caught error: \(describe(error))", sourceLocation: location)
  }

  /// How an error reads in a message: its own text when it has one (`description`,
  /// `debugDescription`), else the way its author would write it (`Boom()`,
  /// `LoaderError.notFound(id: 3)`, `Failure`), without the module name or the
  /// `(unknown context at $…)` of a type declared inside a function.
  static func describe(_ error: any Error) -> String {
    // Through `Any`: an `Error` existential always converts to `NSError`, which has a
    // description, so the checks must look at the error's own type.
    switch error as Any {
    case is any CustomStringConvertible, is any CustomDebugStringConvertible, is any TextOutputStreamable:
      return String(describing: error)
    default:
      let typeName = String(describing: type(of: error))
      switch Mirror(reflecting: error).displayStyle {
      case .enum: return "\(typeName).\(String(describing: error))"
      case .class: return typeName
      default: return String(describing: error)
      }
    }
  }
}
