// atrium-viewers: many cheap WebRTC peers in one process on one thread, for the benchmarks
// (bench/viewers_sweep.py) and the native-viewer integration test. Driven over stdin/stdout with
// JSON lines (one request, one reply); see `Control.swift` and bench/README of viewers_sweep.py.
internal import AtriumLoadPeer

let code = LoadLoop.run()
exitProcess(code)
