/// The words a greeting says to `name`.
public func greeting(for name: String) -> String { "Hello, \(name)" }
