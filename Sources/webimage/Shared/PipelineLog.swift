import Foundation
import WebImage

/// The pipeline's log level in the CLI: the commands report each failure themselves, so WebImage's own
/// per-request `info` lines would say everything twice. Warnings and errors still show.
enum PipelineLog {
    /// Sets `WebImageLog.logger` to `warning`, or to the level named by `$WEBIMAGE_LOG_LEVEL`
    /// (`trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`).
    static func configure() {
        let name = ProcessInfo.processInfo.environment["WEBIMAGE_LOG_LEVEL"] ?? "warning"
        WebImageLog.logger.logLevel = .init(rawValue: name.lowercased()) ?? .warning
    }
}
