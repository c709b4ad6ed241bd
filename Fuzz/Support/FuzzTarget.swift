internal import CFuzz

/// A fuzz target: one input in, no trap out. Its `main` runs libFuzzer when built with `-DFUZZING` and
/// linked with libFuzzer's `fuzzer_no_main` runtime (`make fuzz`), and otherwise replays the corpus files or
/// directories given as arguments (`make test`).
public protocol FuzzTarget {
    static func fuzz(_ bytes: [UInt8])
}

/// The target of this process, for the C callback (which cannot capture).
nonisolated(unsafe) private var currentTarget: (([UInt8]) -> Void)?

extension FuzzTarget {
    public static func main() {
        currentTarget = fuzz
        #if FUZZING
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            _ = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                currentTarget?(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                return 0
            }
        #else
            FuzzReplay.run { bytes in currentTarget?(bytes) }
        #endif
    }
}
