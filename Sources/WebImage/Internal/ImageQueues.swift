import Dispatch
import Foundation
import Synchronization

/// N serial queues for disk reads, decoding and transforms (N = active cores, 1…16), handed out round-robin
/// (YYWebImage's image queues). Serial queues, not one concurrent queue, so that a burst of decodes never
/// spawns more threads than cores.
///
/// - Important: Thread-safe.
final class ImageQueues: Sendable {
    static let shared = ImageQueues()

    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)

    init(count: Int = ProcessInfo.processInfo.activeProcessorCount) {
        let n = min(max(count, 1), 16)
        queues = (0..<n).map { DispatchQueue(label: "webimage.image.\($0)", qos: .userInitiated) }
    }

    /// The next queue, round-robin.
    func nextQueue() -> DispatchQueue {
        let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return queues[(i % queues.count + queues.count) % queues.count]
    }
}
