/// A harness worker process, as its lane's driver holds it: the process, and the watch over
/// it (``WorkerWatch``). What is known of the attempts it runs (``WorkerSupervision``) and how
/// its channel is read (``WorkerMessages``) are its lane's machine's
/// (``WorkerLaneMachine/WorkerState``).
struct WorkerConnection {
  let process: WorkerProcess
  var watch: WorkerWatch

  /// Starts a worker; `marker` starts the numbered line it writes to its output as each `run`
  /// request's test starts, `nil` for a worker that runs tests side by side.
  init(executable: String, marker: String?, stop: StopRequest?) throws {
    process = try WorkerProcess(executable: executable, arguments: [WorkerMain.flag],
                                environment: marker.map { [WorkerMain.markerVariable: $0] } ?? [:])
    watch = WorkerWatch(process: process.process, channel: process.channel, requests: process, stop: stop)
  }

  /// Stops the worker at once.
  mutating func kill() { watch.kill() }

  /// Tells the worker to stop, unless it ended already: it exits once it read what it was
  /// sent before.
  func tellToStop() {
    guard watch.exit == nil else { return }
    _ = process.send(.stop)
    process.closeRequests()
  }
}
