import Foundation
import ImageCodec

/// The checks every optional codec module runs on its part of `corpus/modern/` (AVIF, HEIC, JPEG XL), so the
/// three test targets share one implementation.
public enum ModernCodecChecks {
    /// The limits the manifest's `expected` column assumes ("an SDK pixel budget of <= 100 Mpx").
    public static let manifestLimits = DecodeLimits(maxPixelsPerFrame: 100_000_000)

    /// Decodes every row of `format`'s manifest and returns what differs from it: an `ok` row must decode (all
    /// frames) with the manifest's size (or `displayed WxH` from its notes) and frame count; a `reject` row must
    /// throw an `ImageCodecError`.
    /// `displayed` gives the size expected after transforms the manifest does not describe (its size is the
    /// coded one), by file name suffix.
    public static func manifestMismatches(format: String, displayed: [String: (Int, Int)] = [:],
                                          decode: (Data, DecodeOptions) throws -> Image) throws -> (checked: Int, mismatches: [String]) {
        var mismatches: [String] = []
        let entries = try ModernCorpus.entries(format: format)
        for entry in entries {
            let data = try Data(contentsOf: entry.url)
            let options = DecodeOptions(limits: manifestLimits, pixelFormat: .rgba8, preloadAllFrames: true)
            do {
                let image = try decode(data, options)
                guard entry.isExpectedOK else {
                    mismatches.append("\(entry.path): decoded \(image.width)×\(image.height), manifest says reject")
                    continue
                }
                let (w, h) = displayed.first { entry.path.hasSuffix($0.key) }?.value ?? displayedSize(entry)
                if image.width != w || image.height != h || image.frameCount != entry.frames {
                    mismatches.append("\(entry.path): \(image.width)×\(image.height)×\(image.frameCount), manifest \(w)×\(h)×\(entry.frames)")
                }
            } catch let error as ImageCodecError {
                if entry.isExpectedOK { mismatches.append("\(entry.path): \(error)") }
            } catch {
                mismatches.append("\(entry.path): untyped error \(error)")
            }
        }
        return (entries.count, mismatches)
    }

    /// The manifest's size, or the `displayed WxH` its notes give for a rotated image.
    public static func displayedSize(_ entry: ModernCorpus.Entry) -> (Int, Int) {
        if let range = entry.notes.range(of: #"displayed (\d+)x(\d+)"#, options: .regularExpression) {
            let parts = entry.notes[range].dropFirst("displayed ".count).split(separator: "x").compactMap { Int($0) }
            if parts.count == 2 { return (parts[0], parts[1]) }
        }
        return (entry.width, entry.height)
    }

    /// Feeds truncations and seeded byte flips of each file to `decode`; returns the inputs that gave an error
    /// other than `ImageCodecError` (a crash ends the test process, which fails the run). Seed in `seed`,
    /// printed by the caller on failure.
    public static func mutationFailures(files: [URL], seed: UInt64, variantsPerFile: Int,
                                        decode: (Data) throws -> Image) throws -> [String] {
        var random = SplitMix64(seed: seed)
        var failures: [String] = []
        for file in files {
            let data = try Data(contentsOf: file)
            guard data.count > 16 else { continue }
            for variant in 0..<variantsPerFile {
                var bytes = [UInt8](data)
                if variant % 2 == 0 {
                    bytes = Array(bytes.prefix(random.next(upTo: bytes.count)))
                } else {
                    for _ in 0..<(1 + random.next(upTo: 8)) {
                        let at = random.next(upTo: bytes.count)
                        bytes[at] ^= UInt8(truncatingIfNeeded: 1 + random.next(upTo: 255))
                    }
                }
                do { _ = try decode(Data(bytes)) } catch is ImageCodecError { continue } catch {
                    failures.append("\(file.lastPathComponent) variant \(variant): \(error)")
                }
            }
        }
        return failures
    }

    /// The largest per-channel difference between `image`'s first frame (straight RGBA) and the PNG a
    /// reference tool wrote at `png` (decoded by ImageCodec's PNG decoder), or `nil` when the sizes differ.
    public static func maxDifference(_ buffer: PixelBuffer, referencePNG png: URL) throws -> Int? {
        let reference = try ImageDecoder.decode(try Data(contentsOf: png), options: DecodeOptions(pixelFormat: .rgba8, colorManagement: .preserve)).firstFrame.buffer
        return maxDifference(buffer, reference: reference)
    }

    /// The largest per-channel difference between two buffers (straight RGBA), or `nil` when the sizes differ.
    public static func maxDifference(_ buffer: PixelBuffer, reference: PixelBuffer) -> Int? {
        let reference = reference.converted(to: .rgba8)
        let ours = buffer.converted(to: .rgba8)
        guard reference.width == ours.width, reference.height == ours.height else { return nil }
        var worst = 0
        for y in 0..<ours.height {
            for x in 0..<ours.width {
                let a = ours.pixel(x: x, y: y), b = reference.pixel(x: x, y: y)
                // Colour under a fully transparent pixel is not defined.
                if a.a == 0 && b.a == 0 { continue }
                worst = max(worst, abs(Int(a.r) - Int(b.r)), abs(Int(a.g) - Int(b.g)), abs(Int(a.b) - Int(b.b)), abs(Int(a.a) - Int(b.a)))
            }
        }
        return worst
    }

    /// The mean absolute per-channel difference of two same-sized buffers (straight RGBA), or `nil`.
    public static func meanDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Double? {
        let a = a.converted(to: .rgba8), b = b.converted(to: .rgba8)
        guard a.width == b.width, a.height == b.height else { return nil }
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let p = a.pixel(x: x, y: y), q = b.pixel(x: x, y: y)
                total += abs(Int(p.r) - Int(q.r)) + abs(Int(p.g) - Int(q.g)) + abs(Int(p.b) - Int(q.b)) + abs(Int(p.a) - Int(q.a))
            }
        }
        return Double(total) / Double(a.width * a.height * 4)
    }
}
