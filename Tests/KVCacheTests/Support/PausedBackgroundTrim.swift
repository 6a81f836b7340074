@testable import KVCache
import Foundation
import Synchronization
import XCTest

/// What the auto-trim loop runs (`trimToLimits()` through the core's background gate), started on a global
/// queue and held inside the hook after its first step until `resume()`. `init` returns once it is held there.
final class PausedBackgroundTrim: Sendable {
    private let proceed = DispatchSemaphore(value: 0)
    /// Signalled when the trim has returned.
    let ended = DispatchSemaphore(value: 0)
    private let steps = Mutex(0)

    /// The steps the trim had finished when it last called the hook.
    var stepsSeen: Int { steps.withLock { $0 } }

    init(core: DiskCacheCore, file: StaticString = #filePath, line: UInt = #line) {
        let reached = DispatchSemaphore(value: 0)
        core.trimStepHook.withLock { hook in
            hook = { count in
                self.steps.withLock { $0 = count }
                if count == 1 {
                    reached.signal()
                    self.proceed.wait()
                }
            }
        }
        DispatchQueue.global().async { [ended] in
            core.background.run { try? core.trimToLimits() }
            ended.signal()
        }
        XCTAssertEqual(reached.wait(timeout: .now() + 30), .success, "the trim never reached its first step", file: file, line: line)
    }

    /// Lets the trim go on from its first step.
    func resume() { proceed.signal() }
}
