import Synchronization
import WebImage

/// An animated image with known durations that counts its decodes and hands out tiny (or declared-size)
/// frames, to test the player deterministically.
final class FakeAnimatedImage: AnimatedImage {
    let durations: [Double]
    let loopCount: Int
    let frameWidth: Int
    let frameHeight: Int
    let failingFrames: Set<Int>
    private let decodes = Mutex<[Int]>([])

    init(durations: [Double], loopCount: Int = 0, frameWidth: Int = 2, frameHeight: Int = 2, failingFrames: Set<Int> = []) {
        self.durations = durations
        self.loopCount = loopCount
        self.frameWidth = frameWidth
        self.frameHeight = frameHeight
        self.failingFrames = failingFrames
    }

    /// Indexes decoded so far, in order.
    var decodedIndexes: [Int] { decodes.withLock { $0 } }

    var animatedFrameCount: Int { durations.count }
    var animatedLoopCount: Int { loopCount }
    var animatedBytesPerFrame: Int { frameWidth * frameHeight * 4 }
    func animatedDuration(at index: Int) -> Double { durations[index] }

    func animatedFrame(at index: Int) -> PixelBuffer? {
        decodes.withLock { $0.append(index) }
        if failingFrames.contains(index) { return nil }
        // The frame's index is written into its first pixel so tests can tell frames apart.
        guard var buffer = try? PixelBuffer(width: frameWidth, height: frameHeight) else { return nil }
        buffer.setPixel(x: 0, y: 0, to: RGBA(r: UInt8(index % 256), g: UInt8(index / 256), b: 0, a: 255))
        return buffer
    }
}
