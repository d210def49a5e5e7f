extension HarnessOptions {
  /// The usage line: every option, as ArgumentParser writes them. Written out because
  /// ArgumentParser shortens the synopsis of a command with more than 12 optional options
  /// to `<options>`; a test pins it against the options the command declares.
  static var synopsis: String {
    "\(executableName) [--waiter <name|all>] [--filter <text> ...] [--list] [--allow-empty] [--repeat <N>] "
      + "[--until-failure] [--retries <N>] [--fail-on-flaky] [--shuffle [<seed>]] [--json <path>] [--trace <path>] [--report-html <path>] [--junit <path>] [--junit-profile <name>] "
      + "[--timeout <seconds>] [--time-limit <seconds|none>] [--slow <seconds>] [--isolation <mode>] [--workers <N>] [--parallel] [--async-width <N>] [--no-capture] [--explore <N>] [--explore-policy <policy>] [--schedule <token>] [--jitter [<seed>]]"
      + " [--format <text|json>] [--only <id> ...] [--only-from <path>] [--rerun-failed] [--shard <index/count>] [--shard-by <suite|test>]"
      + " [--shard-timings <path>]"
  }
}
