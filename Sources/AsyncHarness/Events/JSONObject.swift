/// The members of a JSON object, in the order they were read; a key given twice has its last
/// value. Looked up by a scan rather than a hash: the objects the harness reads (events,
/// worker requests, replies and marks) have a few keys each, and hashing every key cost a
/// worker's parent more than scanning them does.
struct JSONObject: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
  private var members: [(key: String, value: JSONValue)]

  init(_ members: [(key: String, value: JSONValue)]) { self.members = members }

  init(_ dictionary: [String: JSONValue]) { members = dictionary.map { ($0.key, $0.value) } }

  init(dictionaryLiteral elements: (String, JSONValue)...) { members = elements.map { ($0, $1) } }

  /// The value of `key`: the last one given.
  subscript(key: String) -> JSONValue? { members.last { $0.key == key }?.value }

  /// The object as a dictionary, each key with its last value.
  var dictionary: [String: JSONValue] { Dictionary(members) { $1 } }

  /// Its keys, each once.
  var keys: Dictionary<String, JSONValue>.Keys { dictionary.keys }

  /// Its values, each key's last.
  var values: Dictionary<String, JSONValue>.Values { dictionary.values }

  func makeIterator() -> Dictionary<String, JSONValue>.Iterator { dictionary.makeIterator() }

  /// Objects are equal when their keys have equal values, in any order.
  static func == (a: JSONObject, b: JSONObject) -> Bool { a.dictionary == b.dictionary }
}
