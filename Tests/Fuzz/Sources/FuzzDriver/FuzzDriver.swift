import CFuzzerDriver

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts libFuzzer with this process's arguments (`-runs=`, `-max_len=`, corpus folders, …) and
/// exits with its status. A fuzz target's `main` calls it with its `LLVMFuzzerTestOneInput`.
///
/// - Parameter testOneInput: Runs one input; returns 0.
public func runFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
    exit(status)
}
