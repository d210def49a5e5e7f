// The one file that calls libxml2 and holds unsafe pointer code: a streaming writer to a
// temporary file and a streaming reader. Every failure becomes a `JUnitError` naming the
// call; no libxml2 type leaves this file.

import AsyncHarness
import CLibXML2
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams XML into a new temporary file through libxml2's `xmlTextWriter`, indented by two
/// spaces. Text and attribute values are ``XMLText``: sanitized, so they hold no NUL and no
/// character XML 1.0 forbids; the writer escapes `<`, `>`, `&`, `"` and line breaks.
///
/// The file is removed when the writer goes away, unless ``moveInto(place:)`` moved it.
final class XMLWriter {
  /// The temporary file being written.
  let path: String
  private var fileDescriptor: Int32
  private var writer: xmlTextWriterPtr?
  private var moved = false

  /// The name of a temporary file for `name`, `XXXXXX` standing for six random characters.
  static func temporaryName(for name: String) -> String {
    ".\(name).tmp-XXXXXX"
  }

  /// Creates a file named ``temporaryName(for:)`` in `directory`, readable by everyone like an
  /// ordinary report, and registers it with ``TemporaryFiles`` until it is moved or removed.
  /// - Throws: ``JUnitError/destinationUnusable(path:reason:)`` naming `destination` (never the
  ///   temporary file) when the file cannot be created.
  init(temporaryFileIn directory: String, named name: String, for destination: String) throws {
    var template = Array("\(directory)/\(Self.temporaryName(for: name))".utf8CString)
    fileDescriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    guard fileDescriptor >= 0 else {
      throw JUnitError.destinationUnusable(
        path: destination, reason: "cannot create a temporary file in \(directory): \(ReportDestination.systemError())")
    }
    TemporaryFiles.add(path)
    // Never inherited by a process a test starts (in-process) or a worker.
    _ = fcntl(fileDescriptor, F_SETFD, FD_CLOEXEC)
    fchmod(fileDescriptor, 0o644)
    guard let buffer = xmlOutputBufferCreateFd(fileDescriptor, nil) else {
      throw JUnitError.callFailed(call: "xmlOutputBufferCreateFd", path: path, reason: nil)
    }
    guard let writer = xmlNewTextWriter(buffer) else {
      xmlOutputBufferClose(buffer)
      throw JUnitError.callFailed(call: "xmlNewTextWriter", path: path, reason: nil)
    }
    self.writer = writer
    try check(xmlTextWriterSetIndent(writer, 1), "xmlTextWriterSetIndent")
    try withXMLChars("  ") { try check(xmlTextWriterSetIndentString(writer, $0), "xmlTextWriterSetIndentString") }
  }

  deinit {
    if let writer { xmlFreeTextWriter(writer) }
    if fileDescriptor >= 0 { close(fileDescriptor) }
    if !moved { unlink(path) }
    TemporaryFiles.remove(path)
  }

  /// Writes `<?xml version="1.0" encoding="UTF-8"?>`.
  func startDocument() throws {
    try check(xmlTextWriterStartDocument(try activeWriter(), "1.0", "UTF-8", nil), "xmlTextWriterStartDocument")
  }

  /// Closes every open element and ends the document.
  func endDocument() throws {
    try check(xmlTextWriterEndDocument(try activeWriter()), "xmlTextWriterEndDocument")
  }

  /// Opens the element `name`, a valid XML name.
  func startElement(_ name: String) throws {
    let writer = try activeWriter()
    try withXMLChars(name) { try check(xmlTextWriterStartElement(writer, $0), "xmlTextWriterStartElement") }
  }

  /// Closes the innermost open element (`/>` when it has no content).
  func endElement() throws {
    try check(xmlTextWriterEndElement(try activeWriter()), "xmlTextWriterEndElement")
  }

  /// Writes an attribute of the element just opened.
  func attribute(_ name: String, _ value: XMLText) throws {
    let writer = try activeWriter()
    try withXMLChars(name) { name in
      try withXMLChars(value.string) { value in
        try check(xmlTextWriterWriteAttribute(writer, name, value), "xmlTextWriterWriteAttribute")
      }
    }
  }

  /// Writes escaped text content.
  func text(_ value: XMLText) throws {
    let writer = try activeWriter()
    try withXMLChars(value.string) { try check(xmlTextWriterWriteString(writer, $0), "xmlTextWriterWriteString") }
  }

  /// Copies the bytes of `other`'s file that follow its XML declaration (its first line,
  /// written by ``startDocument()``, without its line break): elements already written, at
  /// this point.
  func appendContents(afterDeclarationOf other: XMLWriter) throws {
    let writer = try activeWriter()
    let input = open(other.path, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else {
      throw JUnitError.callFailed(call: "open", path: other.path, reason: ReportDestination.systemError())
    }
    defer { close(input) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
    defer { buffer.deallocate() }
    let bytes = buffer.bindMemory(to: xmlChar.self)
    var inDeclaration = true
    while true {
      let count = read(input, buffer.baseAddress, buffer.count)
      guard count >= 0 else {
        throw JUnitError.callFailed(call: "read", path: other.path, reason: ReportDestination.systemError())
      }
      if count == 0 { return }
      var start = 0
      if inDeclaration {
        guard let newline = bytes[..<count].firstIndex(of: UInt8(ascii: "\n")) else { continue }
        start = newline
        inDeclaration = false
      }
      try check(
        xmlTextWriterWriteRawLen(writer, bytes.baseAddress! + start, Int32(count - start)), "xmlTextWriterWriteRawLen")
    }
  }

  /// Flushes everything to the file and closes it. There is no `fsync`: the rename that
  /// follows already keeps a crashed or interrupted process from leaving a torn report, and
  /// syncing a 100 MB report would cost more than writing it.
  func closeFile() throws {
    let writer = try activeWriter()
    try check(xmlTextWriterFlush(writer), "xmlTextWriterFlush")
    xmlFreeTextWriter(writer)
    self.writer = nil
    let descriptor = fileDescriptor
    fileDescriptor = -1
    guard close(descriptor) == 0 else {
      throw JUnitError.callFailed(call: "close", path: path, reason: ReportDestination.systemError())
    }
  }

  /// Renames the closed file to `destination`, atomically replacing what is there.
  func moveInto(place destination: String) throws {
    guard rename(path, destination) == 0 else {
      throw JUnitError.callFailed(call: "rename", path: destination, reason: ReportDestination.systemError())
    }
    moved = true
    TemporaryFiles.remove(path)
  }

  private func activeWriter() throws -> xmlTextWriterPtr {
    guard let writer else { throw JUnitError.callFailed(call: "XMLWriter (already closed)", path: path, reason: nil) }
    return writer
  }

  private func check(_ status: Int32, _ call: String) throws {
    guard status >= 0 else { throw JUnitError.callFailed(call: call, path: path, reason: nil) }
  }

}

/// Reads XML files with libxml2's streaming `xmlTextReader`, handing chosen elements over as
/// ``ParsedElement`` trees, one at a time, so a large file never sits in memory whole.
enum XMLReader {
  /// Reads `path` and calls `body` with each element for which `matches(name, depth)` holds
  /// (the root has depth 0), without looking inside it for further matches.
  /// - Returns: The root element's name and attributes, without its children.
  /// - Throws: ``JUnitError/unreadableReport(path:reason:)`` when the file is missing,
  ///   unreadable or not well-formed (naming the line and libxml2's message), and whatever
  ///   `body` throws.
  @discardableResult
  static func read(
    _ path: String, matching matches: (String, Int) -> Bool, _ body: (ParsedElement) throws -> Void
  ) throws -> ParsedElement {
    guard access(path, R_OK) == 0 else {
      throw JUnitError.unreadableReport(path: path, reason: ReportDestination.systemError())
    }
    guard let reader = xmlReaderForFile(path, nil, Int32(XML_PARSE_NONET.rawValue)) else {
      throw JUnitError.callFailed(call: "xmlReaderForFile", path: path, reason: nil)
    }
    defer { xmlFreeTextReader(reader) }
    let errors = ParseErrors()
    let context = Unmanaged.passUnretained(errors).toOpaque()
    xmlTextReaderSetStructuredErrorHandler(reader, { context, error in
      guard let context, let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
      let errors = Unmanaged<ParseErrors>.fromOpaque(context).takeUnretainedValue()
      guard errors.first == nil else { return }
      let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
      errors.first = "line \(error.pointee.line): \(message.trimmingCharacters(in: .whitespacesAndNewlines))"
    }, context)

    var root: ParsedElement?
    var status = xmlTextReaderRead(reader)
    while status == 1 {
      if xmlTextReaderNodeType(reader) == Int32(XML_READER_TYPE_ELEMENT.rawValue),
         let namePointer = xmlTextReaderConstName(reader) {
        let name = String(cString: namePointer)
        if root == nil { root = ParsedElement(name: name, attributes: attributes(at: reader), children: []) }
        if matches(name, Int(xmlTextReaderDepth(reader))) {
          guard let node = xmlTextReaderExpand(reader) else { break }
          try body(element(node))
          status = xmlTextReaderNext(reader)
          continue
        }
      }
      status = xmlTextReaderRead(reader)
    }
    withExtendedLifetime(errors) {}
    if status != 0 || errors.first != nil {
      throw JUnitError.unreadableReport(
        path: path, reason: "not well-formed XML (\(errors.first ?? "libxml2 gave no reason"))")
    }
    guard let root else {
      throw JUnitError.unreadableReport(path: path, reason: "not well-formed XML (no root element)")
    }
    return root
  }

  /// The attributes of the element `reader` is on; the reader stays on that element.
  private static func attributes(at reader: xmlTextReaderPtr) -> [ParsedAttribute] {
    var attributes: [ParsedAttribute] = []
    var status = xmlTextReaderMoveToFirstAttribute(reader)
    while status == 1 {
      attributes.append(ParsedAttribute(name: string(xmlTextReaderConstName(reader)), value: string(xmlTextReaderConstValue(reader))))
      status = xmlTextReaderMoveToNextAttribute(reader)
    }
    xmlTextReaderMoveToElement(reader)
    return attributes
  }

  /// The whole document as one tree: for small files and tests.
  static func readDocument(_ path: String) throws -> ParsedElement {
    var document: ParsedElement?
    try read(path, matching: { _, depth in depth == 0 }) { document = $0 }
    return document!
  }

  private final class ParseErrors {
    var first: String?
  }

  private static func element(_ node: xmlNodePtr) -> ParsedElement {
    var attributes: [ParsedAttribute] = []
    var attribute = node.pointee.properties
    while let current = attribute {
      attributes.append(ParsedAttribute(name: string(current.pointee.name), value: text(of: current.pointee.children)))
      attribute = current.pointee.next
    }
    var children: [ParsedNode] = []
    var child = node.pointee.children
    while let current = child {
      switch current.pointee.type {
      case XML_ELEMENT_NODE: children.append(.element(element(current)))
      case XML_TEXT_NODE, XML_CDATA_SECTION_NODE: children.append(.text(string(current.pointee.content)))
      default: break
      }
      child = current.pointee.next
    }
    return ParsedElement(name: string(node.pointee.name), attributes: attributes, children: children)
  }

  private static func text(of first: xmlNodePtr?) -> String {
    var result = ""
    var node = first
    while let current = node {
      if current.pointee.type == XML_TEXT_NODE { result += string(current.pointee.content) }
      node = current.pointee.next
    }
    return result
  }

  private static func string(_ characters: UnsafePointer<xmlChar>?) -> String {
    characters.map { String(cString: $0) } ?? ""
  }
}

/// Calls `body` with `string` as a NUL-terminated `xmlChar` buffer. ``XMLText`` and XML names
/// hold no NUL, so nothing is cut.
private func withXMLChars<R>(_ string: String, _ body: (UnsafePointer<xmlChar>) throws -> R) rethrows -> R {
  try string.withCString { characters in
    try characters.withMemoryRebound(to: xmlChar.self, capacity: string.utf8.count + 1, body)
  }
}
