import Foundation

extension WebImageCLI {
    /// One measured run of the tool (see `MeasuredProcess.Run`).
    public typealias MeasuredRun = MeasuredProcess.Run

    /// Runs `webimage arguments…` under `MeasuredProcess` (peak RSS as `wait4` reports it; killed past
    /// `deadline` seconds or `rssCeiling` bytes). `WEBIMAGE_CLI_BINARY` in the environment runs another build
    /// of the tool (e.g. an older commit's). Throws `NotBuilt` when the binary is missing.
    public static func runMeasured(_ arguments: [String], deadline: Double = 60,
                                   rssCeiling: Int = 1 << 30) throws -> MeasuredRun {
        let binary = ProcessInfo.processInfo.environment["WEBIMAGE_CLI_BINARY"].map(URL.init(fileURLWithPath:)) ?? binary
        guard FileManager.default.isExecutableFile(atPath: binary.path) else { throw NotBuilt(path: binary.path) }
        guard FileManager.default.isExecutableFile(atPath: MeasuredProcess.gnuTime) else { throw NotBuilt(path: MeasuredProcess.gnuTime) }
        return try MeasuredProcess.run(binary.path, arguments, deadline: deadline, rssCeiling: rssCeiling)
    }

    /// Runs `webimage convert FILE out.png ARGUMENTS…` measured (a header bomb expected to be refused), with
    /// the output in a temporary file removed afterwards.
    public static func runMeasuredConvert(_ file: URL, _ arguments: [String] = []) throws -> MeasuredRun {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("bomb-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: out) } // refused: usually nothing was written
        return try runMeasured(["convert", file.path, out.path] + arguments)
    }
}
