/// Task-group arrival order: pages are fetched side by side and collected as they finish,
/// which is not the order they were asked for.
public enum Pages {
  /// Fetches one page.
  static func fetch(_ number: Int) async -> String {
    await Task.yield()
    return "page \(number)"
  }

  /// The pages, in the order they finished (the bug: the caller expects them in order).
  public static func fetchAll(_ numbers: [Int]) async -> [String] {
    await withTaskGroup(of: String.self) { group in
      for number in numbers { group.addTask { await fetch(number) } }
      var pages: [String] = []
      for await page in group { pages.append(page) }
      return pages
    }
  }

  /// The pages, in the order they were asked for (the fix).
  public static func fetchAllInOrder(_ numbers: [Int]) async -> [String] {
    await withTaskGroup(of: (Int, String).self) { group in
      for (index, number) in numbers.enumerated() { group.addTask { (index, await fetch(number)) } }
      var pages = [String?](repeating: nil, count: numbers.count)
      for await (index, page) in group { pages[index] = page }
      return pages.compactMap(\.self)
    }
  }
}
