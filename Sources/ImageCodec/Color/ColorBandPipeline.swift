import Dispatch
import Foundation

/// Takes the colour transform of a full-size decode off the decoder's critical path: the decoder hands each band
/// of rows as it finishes it (`bandFinished`), a helper thread converts that band while the decoder produces the
/// next, and the decoding thread converts whatever no helper has taken when it is done, then waits for the bands
/// a helper is converting. The wall time of a tagged decode becomes about the decode's plus one band; the CPU
/// time is the same as converting after the decode (the work only moves to another core).
///
/// Why a pipeline rather than splitting the finished image into strips (`concurrentPerform`): the conversion
/// (about 21 ms for 12 Mpx) overlaps the decode (about 40 ms) instead of following it, so on two cores only the
/// last band's conversion is added, against half of the conversion for two strips; and each band is converted
/// while it is still in the caches the decoder just wrote it through.
///
/// Safe whatever the thread pool does: a helper is a work item on a global queue, but the decoding thread never
/// waits for one to *start* (it converts the bands left waiting itself), only for bands a helper has already
/// taken, which are running. So a busy or exhausted pool makes the decode as slow as converting after it, never
/// stuck, and after `run` returns or throws no thread touches the rows.
///
/// - Important: One pipeline per decode. `bandFinished` is called from the decoding thread only, with disjoint
///   row ranges; `convert` is called from several threads at once on disjoint ranges, never under a lock.
final class ColorBandPipeline: @unchecked Sendable {
    // @unchecked: the mutable state is in `state` (a Mutex); `convert` is Sendable and only ever sees row ranges
    // the decoder has finished with and handed over under the lock; `inFlight` is a DispatchGroup (thread-safe).
    private struct State {
        /// Bands finished by the decoder and not yet taken, in order.
        var waiting: [Range<Int>] = []
        var helpers = 0
        /// Set when the decoding thread is done: no band is taken after this.
        var isClosed = false
    }

    private let state = Mutex(State())
    private let inFlight = DispatchGroup()
    private let convert: @Sendable (Range<Int>) -> Void
    private let maximumHelpers: Int

    /// The smallest image (pixels) worth a helper thread: 1 Mpx (1000 × 1000). Below it the conversion takes
    /// under 2 ms and the decoding thread does it after the decode, as before.
    static let minimumPixels = 1_000_000

    /// Rows per band for rows of `width` pixels: about 256 K pixels (1 MiB of RGBA), at least 16 rows (a JPEG
    /// iMCU row at most). For 4000 × 3000 that is 65 rows, 47 bands, about 0.5 ms of conversion each.
    static func bandRows(width: Int) -> Int { max(16, (1 << 18) / max(width, 1)) }

    /// Whether a decode of `width` × `height` should convert through a pipeline: large enough, and a second core
    /// to run the helper on.
    static func isWorthwhile(width: Int, height: Int) -> Bool {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        return (overflow || pixels >= minimumPixels) && ProcessInfo.processInfo.activeProcessorCount > 1
    }

    private init(maximumHelpers: Int, convert: @escaping @Sendable (Range<Int>) -> Void) {
        self.maximumHelpers = max(1, maximumHelpers)
        self.convert = convert
    }

    /// Runs `decode`, which calls its argument with each band of rows it has finished writing (disjoint ranges,
    /// any order), and converts each band with `convert`: on helpers while `decode` goes on, on this thread for
    /// what is left when it returns. Returns once every band handed over is converted. When `decode` throws,
    /// bands not yet taken are dropped and the helpers' bands are waited for before the error is rethrown.
    ///
    /// - Parameter maximumHelpers: helper threads at most (default: one fewer than the active cores, at most 3).
    static func run<T>(maximumHelpers: Int = min(3, ProcessInfo.processInfo.activeProcessorCount - 1),
                       convert: @escaping @Sendable (Range<Int>) -> Void,
                       decode: (_ bandFinished: (Range<Int>) -> Void) throws -> T) throws -> T {
        let pipeline = ColorBandPipeline(maximumHelpers: maximumHelpers, convert: convert)
        let result: T
        do {
            result = try decode { pipeline.bandFinished($0) }
        } catch {
            pipeline.close(convertingLeftovers: false)
            throw error
        }
        pipeline.close(convertingLeftovers: true)
        return result
    }

    /// Hands over a band; starts a helper when none runs, or another when the backlog grows (the transform is
    /// slower than the decoder, as Little CMS's LUT and CMYK transforms are).
    private func bandFinished(_ rows: Range<Int>) {
        guard !rows.isEmpty else { return }
        let startsHelper = state.withLock { s -> Bool in
            precondition(!s.isClosed, "a band was handed over after the decode ended")
            s.waiting.append(rows)
            guard s.helpers == 0 || (s.waiting.count > 1 && s.helpers < maximumHelpers) else { return false }
            s.helpers += 1
            return true
        }
        if startsHelper { DispatchQueue.global().async { self.help() } }
    }

    /// A helper: converts waiting bands until there are none (or the decode has closed the pipeline).
    private func help() {
        while let band = take(isHelper: true) {
            convert(band)
            inFlight.leave()
        }
    }

    /// The next waiting band, entered in `inFlight` under the lock (so `close` sees every band taken before it);
    /// `nil` when none is waiting, which for a helper also ends it.
    private func take(isHelper: Bool) -> Range<Int>? {
        state.withLock { s -> Range<Int>? in
            guard !s.isClosed, !s.waiting.isEmpty else {
                if isHelper { s.helpers -= 1 }
                return nil
            }
            inFlight.enter()
            return s.waiting.removeFirst()
        }
    }

    /// Ends the decode's side: takes the bands still waiting (converting them here, or dropping them after a
    /// failure), then waits for the bands helpers are converting. Helpers scheduled but not started find the
    /// pipeline closed and end without touching a row.
    private func close(convertingLeftovers: Bool) {
        let leftovers = state.withLock { s -> [Range<Int>] in
            s.isClosed = true
            defer { s.waiting.removeAll() }
            return s.waiting
        }
        if convertingLeftovers { for band in leftovers { convert(band) } }
        inFlight.wait()
    }
}

extension ColorBandPipeline {
    /// The rows a decoder writes, shared with the helpers.
    private struct SharedRows: @unchecked Sendable {
        // @unchecked: the pointer is only dereferenced for bands the decoder has finished and handed over (one
        // thread per band), and only before `run` returns (it waits for every band taken).
        let base: UnsafeMutableRawPointer
    }

    /// Runs `decode` over the `width`-pixel rows at `pixels` (`bytesPerRow` apart) and converts each band it
    /// finishes with `transform`, through a pipeline (see the type). The rows must stay valid until this returns.
    static func run<T>(_ transform: ColorTransform, pixels: UnsafeMutableRawPointer, width: Int, bytesPerRow: Int,
                       decode: (_ bandFinished: (Range<Int>) -> Void) throws -> T) throws -> T {
        let rows = SharedRows(base: pixels)
        return try run(convert: { band in
            transform.apply(rows: rows.base.advanced(by: band.lowerBound * bytesPerRow), width: width,
                            height: band.count, bytesPerRow: bytesPerRow)
        }, decode: decode)
    }
}
