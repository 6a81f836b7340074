import Dispatch
import Fetcher
import Foundation
import ImageCodec
import TestSupport
import WebImage

/// A randomized, seeded test of the pipeline against a small reference model: a few managers (some released
/// mid-run) over one loopback server with delays and failures; each step is one of request (random options,
/// priorities, thumbnail sizes, transforms, setters), cancel, suspend/resume, a change of concurrency or order,
/// prefetch start/stop/cancel, a cache setting, a memory warning.
///
/// For every request the model checks: exactly one terminal callback, nothing after it (nor during it), the
/// image variant its options ask for (frames, decode-for-display, size), an error for a failing URL, `.cancelled`
/// for a superseded setter request and no stale image applied; for prefetch calls, that a caller nobody stopped
/// sees nothing cancelled; and that the queues never sit idle while work is pending and not suspended (a
/// watchdog deadline while running, and a final drain).
///
/// - Important: One schedule runs its steps from the calling thread; the pipeline's callbacks arrive on its own
///   threads. Thread-safe records; run schedules one after another.
public enum PipelineModel {
    /// Serves the model's URLs on `server`: still PNGs, 3-frame APNGs, dripped progressive JPEGs, slow PNGs,
    /// 404s and bodies cut short.
    public static func installRoutes(on server: HTTPTestServer) throws {
        for index in 0..<URLKind.variants {
            server.route(URLKind.still.path(index), .bytes(try png(width: 40, height: 30, seed: index), contentType: "image/png")
                .delayed(by: 0.002 * Double(index)))
            server.route(URLKind.animated.path(index), .bytes(try apng(seed: index), contentType: "image/apng"))
            server.route(URLKind.progressive.path(index), .drip(try progressiveJPEG(seed: index), chunk: 1_500, interval: 0.004))
            server.route(URLKind.slow.path(index), .bytes(try png(width: 24, height: 24, seed: 50 + index), contentType: "image/png")
                .delayed(by: 0.12))
            server.route(URLKind.missing.path(index), .status(404))
            server.route(URLKind.broken.path(index), .closeMidBody(try png(width: 32, height: 32, seed: 90 + index), after: 60))
        }
    }

    /// Runs `budget.schedules` schedules (seeds `budget.seed`, `budget.seed + 1`, …) over a new loopback server
    /// and stops at the first that violates the model. Returns nil when none did, else a report naming the seed
    /// and how to replay it.
    public static func runSchedules(_ budget: PipelineModelBudget) throws -> String? {
        let server = try HTTPTestServer.start()
        defer { server.shutdown() }
        try installRoutes(on: server)
        for schedule in 0..<budget.schedules {
            let seed = budget.seed &+ UInt64(schedule)
            let violations = run(seed: seed, steps: budget.steps, server: server)
            if !violations.isEmpty {
                return "pipeline model: \(violations.count) violations with seed \(seed) (replay: WEBIMAGE_MODEL_SEED=\(seed) "
                    + "WEBIMAGE_MODEL_SCHEDULES=1 WEBIMAGE_MODEL_STEPS=\(budget.steps)):\n"
                    + violations.prefix(20).joined(separator: "\n")
            }
        }
        return nil
    }

    /// Runs one schedule of `steps` steps from `seed` and returns what the model saw violated (empty: none).
    public static func run(seed: UInt64, steps: Int, server: HTTPTestServer) -> [String] {
        let schedule = Schedule(seed: seed, server: server)
        defer { schedule.tearDown() }
        for step in 0..<steps { schedule.step(step) }
        schedule.drain()
        return schedule.violations.withLock { $0 }
    }

    // MARK: Images

    static func png(width: Int, height: Int, seed: Int) throws -> Data {
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(try pattern(width: width, height: height, seed: seed))
        return try encoder.encode()
    }

    static func apng(seed: Int) throws -> Data {
        var encoder = ImageEncoder(format: .apng, loopCount: 0)
        for frame in 0..<3 { encoder.addFrame(try pattern(width: 20, height: 20, seed: seed * 7 + frame), duration: 0.1) }
        return try encoder.encode()
    }

    static func progressiveJPEG(seed: Int) throws -> Data {
        var encoder = ImageEncoder(format: .jpeg, options: EncodeOptions(quality: 0.9, isProgressive: true))
        encoder.addFrame(try pattern(width: 120, height: 90, seed: seed))
        return try encoder.encode()
    }

    static func pattern(width: Int, height: Int, seed: Int) throws -> PixelBuffer {
        var buffer = try PixelBuffer(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                buffer.setPixel(x: x, y: y, to: RGBA(r: UInt8((x * 5 + seed * 13) & 255), g: UInt8((y * 7) & 255),
                                                     b: UInt8((x ^ y ^ seed) & 255), a: (x + y) % 5 == 0 ? 128 : 255))
            }
        }
        return buffer
    }
}

/// The kinds of URL the model requests, and what each must give.
enum URLKind: Int, CaseIterable {
    case still, animated, progressive, slow, missing, broken

    static let variants = 3

    func path(_ index: Int) -> String { "/model/\(self)\(index)" }
    var fails: Bool { self == .missing || self == .broken }
    var frameCount: Int { self == .animated ? 3 : 1 }
    /// Full-size pixel size.
    var size: (width: Int, height: Int) {
        switch self {
        case .still: return (40, 30)
        case .animated: return (20, 20)
        case .progressive: return (120, 90)
        case .slow: return (24, 24)
        case .missing, .broken: return (0, 0)
        }
    }
}

/// What one request asked for, and everything it received.
final class RequestRecord: Sendable {
    struct Expected: Sendable {
        let kind: URLKind
        let options: ImageOptions
        let thumbnail: Int?
        let transformed: Bool
        let firstFrameOnly: Bool
        let straightAlpha: Bool
    }

    struct Received: Sendable {
        var terminals: [ImageStage] = []
        var image: Image?
        var error: WebImageError?
        var callbacksAfterTerminal = 0
        var callbacksRunning = 0
        var terminalDuringCallback = false
        var partials = 0
        /// A newer setter request replaced this one before it completed: it must end `.cancelled`.
        var mustBeCancelled = false
    }

    let id: Int
    let label: String
    let expected: Expected
    let received = Mutex(Received())
    let finished: DispatchGroup
    /// Signalled at the first terminal callback.
    let done = DispatchSemaphore(value: 0)

    init(id: Int, label: String, expected: Expected, finished: DispatchGroup) {
        self.id = id
        self.label = label
        self.expected = expected
        self.finished = finished
        finished.enter()
    }

    var isTerminated: Bool { received.withLock { !$0.terminals.isEmpty } }

    /// The completion to give the pipeline.
    var completion: ImageCompletion {
        { [self] image, _, _, stage, error in
            if stage == .progress {
                received.withLock { r in
                    if !r.terminals.isEmpty { r.callbacksAfterTerminal += 1 }
                    r.partials += 1
                }
                return
            }
            let first = received.withLock { r -> Bool in
                if r.callbacksRunning > 0 { r.terminalDuringCallback = true }
                r.terminals.append(stage)
                guard r.terminals.count == 1 else { return false }
                r.image = image
                r.error = error
                return true
            }
            if first {
                done.signal()
                finished.leave()
            }
        }
    }

    /// The progress closure to give the pipeline: marks itself running, to catch a terminal call overlapping it.
    var progress: ImageProgress {
        { [self] _, _ in
            received.withLock { r in
                if !r.terminals.isEmpty { r.callbacksAfterTerminal += 1 }
                r.callbacksRunning += 1
            }
            received.withLock { $0.callbacksRunning -= 1 }
        }
    }

    /// Checks what was received against what was asked for.
    func check() -> [String] { problems().map { "request \(id) (\(label)): \($0)" } }

    private func problems() -> [String] {
        let r = received.withLock { $0 }
        var problems: [String] = []
        if r.terminals.count != 1 { problems.append("\(r.terminals.count) terminal callbacks \(r.terminals)") }
        if r.callbacksAfterTerminal > 0 { problems.append("\(r.callbacksAfterTerminal) callbacks after the terminal one") }
        if r.terminalDuringCallback { problems.append("terminal callback while a progress callback ran") }
        let wantsPartials = expected.options.contains(.progressive) || expected.options.contains(.progressiveBlur)
        if r.partials > 0, !wantsPartials { problems.append("partial images without .progressive") }
        guard let stage = r.terminals.first else { return problems }
        if r.mustBeCancelled, stage != .cancelled { problems.append("superseded setter request ended \(stage)") }
        guard stage == .finished else { return problems }
        if expected.kind.fails {
            if r.error == nil { problems.append("a failing URL finished without an error") }
            return problems
        }
        guard let image = r.image, r.error == nil else {
            problems.append("finished without an image: \(String(describing: r.error))")
            return problems
        }
        // A thumbnail smaller than an animation is a still of its first frame; one that fits stays animated.
        let size = expected.kind.size
        let shrinks = expected.thumbnail.map { $0 < max(size.width, size.height) } ?? false
        let frames = expected.firstFrameOnly || shrinks || expected.transformed ? 1 : expected.kind.frameCount
        if image.frameCount != frames { problems.append("\(image.frameCount) frames, expected \(frames)") }
        if image.isDecodedForDisplay == expected.straightAlpha {
            problems.append("isDecodedForDisplay \(image.isDecodedForDisplay), expected \(!expected.straightAlpha)")
        }
        if expected.transformed {
            if image.width != 8 || image.height != 8 { problems.append("transform not applied: \(image.width)×\(image.height)") }
        } else if let thumbnail = expected.thumbnail {
            if max(image.width, image.height) > thumbnail { problems.append("thumbnail \(image.width)×\(image.height) > \(thumbnail)") }
        } else {
            if image.width != size.width || image.height != size.height {
                problems.append("size \(image.width)×\(image.height), expected \(size.width)×\(size.height)")
            }
        }
        return problems
    }
}
