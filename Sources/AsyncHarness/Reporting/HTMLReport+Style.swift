extension HTMLReport {
  /// The page's one style sheet: no fonts, images or scripts from anywhere, bars and colours
  /// kept when printed. (It holds no `<` or `&`, so the page stays well-formed XML.)
  static let styleSheet: StaticString = """

    body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 2em auto;
      max-width: 72em; padding: 0 1.5em; }
    h1 { font-size: 1.6em; margin: 0 0 0.2em; }
    h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 1.8em; }
    h3 { font-size: 1.05em; margin: 0 0 0.2em; overflow-wrap: anywhere; }
    h4 { font-size: 0.95em; margin: 0.6em 0 0.2em; }
    .result { font-size: 1.15em; font-weight: 600; margin: 0; }
    .result.passed { color: #17692b; background: none; }
    .result.failed { color: #b3261e; background: none; }
    .facts, .none { color: #555; margin: 0.2em 0; overflow-wrap: anywhere; }
    .warning { background: #fff4ce; border-left: 4px solid #c98b00; padding: 0.4em 0.8em; }
    table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
    th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; overflow-wrap: anywhere; }
    td { font-variant-numeric: tabular-nums; }
    tbody th { font-weight: normal; }
    td.fail { color: #b3261e; font-weight: 600; }
    article.failure { border: 1px solid #e5b4b0; border-left: 5px solid #b3261e; border-radius: 4px;
      margin: 1em 0; padding: 0.7em 1em; break-inside: avoid-page; }
    ul.issues { list-style: none; padding: 0; margin: 0.4em 0; }
    li.issue { margin: 0.4em 0; }
    .location { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 0.9em; margin-right: 0.8em; }
    .kind { color: #b3261e; font-size: 0.85em; }
    li.note .kind { color: #8a6100; }
    pre { font: 0.85em/1.4 ui-monospace, Menlo, Consolas, monospace; background: #f6f6f7; border: 1px solid #e3e3e6;
      padding: 0.5em 0.7em; margin: 0.3em 0; white-space: pre-wrap; overflow-wrap: anywhere; }
    .lane { margin: 0.5em 0; }
    .lane-name { font-size: 0.85em; color: #444; }
    .track { position: relative; height: 1.4em; background: #f0f0f2; border: 1px solid #d5d5da; }
    .bar, .swatch { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
    .bar { position: absolute; top: 0; bottom: 0; min-width: 1px; box-sizing: border-box;
      border-right: 1px solid rgba(255, 255, 255, 0.7); }
    .axis { position: relative; height: 1.4em; font-size: 0.8em; color: #555; margin-bottom: 2em; }
    .axis span { position: absolute; transform: translateX(-50%); }
    .axis span:first-child { transform: none; }
    .axis span:last-child { transform: translateX(-100%); }
    .legend { font-size: 0.85em; }
    .key { display: inline-block; margin: 0 1em 0.3em 0; }
    .swatch { display: inline-block; width: 1.6em; height: 0.9em; margin-right: 0.35em; vertical-align: -0.1em;
      border: 1px solid #999; }
    .passed { background: #4caf50; }
    .failed { background: #e53935; }
    .errored { background: #8e0000; }
    .skipped { background: #b0b0b0; }
    .knownIssue { background: #5c9ded; }
    .flaky { background: #ffb300; }
    .retried { background: repeating-linear-gradient(45deg, #ff8f00, #ff8f00 3px, #ffe0a3 3px, #ffe0a3 6px); }
    .unfinished { background: repeating-linear-gradient(45deg, #777, #777 3px, #ccc 3px, #ccc 6px); }
    @media print {
      body { margin: 0; max-width: none; font-size: 11pt; }
      h2 { break-after: avoid-page; }
    }

    """
}
