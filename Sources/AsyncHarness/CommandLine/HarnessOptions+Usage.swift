extension HarnessOptions {
  /// The usage line: every option, in the help's order (those of harness suites alone, then
  /// those `harness test` shares, ``RunFlags``), as ArgumentParser writes them. Written out because
  /// ArgumentParser shortens the synopsis of a command with more than 12 optional options
  /// to `<options>`; a test pins it against the options the command declares.
  static var synopsis: String {
    "\(executableName) [--waiter <name|all>] [--timeout <seconds>] [--isolation <mode>] [--parallel] [--async-width <N>] "
      + "[--no-capture] [--jitter [<seed>]] "
      + "[--filter <text> ...] [--skip <text> ...] [--list] [--allow-empty] [--repeat <N>] [--until-failure] "
      + "[--retries <N>] [--fail-on-flaky] "
      + "[--shuffle [<seed>]] [--json <path>] [--junit <path>] [--trace <path>] [--report-html <path>] "
      + "[--junit-profile <name>] [--time-limit <seconds|none>] [--slow <seconds>] [--workers <N>] [--explore <N>] "
      + "[--explore-policy <policy>] [--schedule <token>] [--format <text|json>] "
      + "[--only <id> ...] [--only-from <path>] [--rerun-failed] [--shard <index/count>] [--shard-by <suite|test>] "
      + "[--shard-timings <path>]"
  }
}
