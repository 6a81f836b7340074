import Foundation
import Synchronization

/// How a storm request is cancelled, if at all.
public enum StormCancel: Sendable, CaseIterable {
    case none, immediately, afterRandomDelay, fromResponseCallback, fromDataCallback
}

/// Shared plan for the fetcher's cancellation storms (FetcherTests and the ThreadSanitizer StressTests): which
/// requests are cancelled and how, with a seeded generator so a failing run can be replayed.
public struct CancellationStormPlan: Sendable {
    /// The cancel mode of each request, by index.
    public let modes: [StormCancel]

    /// `count` requests, `cancelledFraction` of them cancelled, spread over the four cancel modes.
    public init(count: Int, cancelledFraction: Double, seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        let cancelModes: [StormCancel] = [.immediately, .afterRandomDelay, .fromResponseCallback, .fromDataCallback]
        modes = (0..<count).map { _ in
            Double(generator.next() % 10_000) / 10_000 < cancelledFraction
                ? cancelModes[Int(generator.next() % UInt64(cancelModes.count))] : .none
        }
    }

    /// Installs `/storm` on `server`: by query number, an immediate body, a short delay or a short drip.
    public static func installRoutes(on server: HTTPTestServer) {
        server.route("/storm") { request in
            let number = Int(request.uri.split(separator: "=").last ?? "") ?? 0
            let body = [UInt8](repeating: UInt8(truncatingIfNeeded: number), count: 600)
            switch number % 4 {
            case 0, 1: return .bytes(body)
            case 2: return .bytes(body).delayed(by: 0.003)
            default: return .drip(body, chunk: 200, interval: 0.002)
            }
        }
    }

    /// The body `/storm?i=<number>` returns.
    public static func expectedBody(_ number: Int) -> Data {
        Data(repeating: UInt8(truncatingIfNeeded: number), count: 600)
    }
}

