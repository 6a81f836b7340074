import CWebImageJXL
import Foundation
import ImageCodec
import TestSupport
import XCTest

/// Automatic quality checked by the metric it does not optimise: Butteraugli (libjxl 0.7's `JxlButteraugliCompute`)
/// on every photograph of the shared corpus, as a 400 px thumbnail, for JPEG and WebP at each level.
///
/// The bounds are Butteraugli's 3-norm at the SSIMULACRA2 scores the levels name (SSIMULACRA2 70 ≈ libjxl
/// distance 2, 80 ≈ distance 1 in the published correspondence) with headroom for the two metrics' disagreement
/// on single images. First run (debug, 268 outputs): with bounds 3.0 / 2.0, 4 outputs crossed them, all graphics
/// from transparent sources (worst: medium 3.32 imagor_icon.png WebP, 3.09 arqoii_dice.png JPEG; high 2.20
/// kingfisher_logo@2x.png JPEG, 2.05 nuke_bench-01.png WebP); photographs stayed well under. The bounds below
/// are the worst values plus about 0.2, so a search that undershot by a whole level still crosses them. WebP's
/// search now lands nearer its SSIMULACRA2 target (6 tries to a bracket of 1, sharp YUV, the method-6 winner:
/// median score 77.2 → 76.5 at a target of 76.1 on the corpus), and its worst medium output, still imagor_icon.png,
/// went from 3.32 to 3.63 (2026-11-29; the other worst values: JPEG medium 3.27, JPEG high 2.20, WebP high 2.18):
/// the medium bound moved with it by the same rule.
final class AutomaticQualityButteraugliTests: XCTestCase {
    static let bounds: [(QualityTarget, Float)] = [(.medium, 3.85), (.high, 2.4)]

    func testAutomaticQualityStaysUnderItsButteraugliDistance() throws {
        let dir: URL
        do { dir = try Corpus.require().appendingPathComponent("photos") } catch { throw XCTSkip("\(error)") }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") }.sorted()
        XCTAssertGreaterThan(names.count, 60)
        // The files in parallel (two cores on CI: this test was the suite's slowest), asserted here in file order.
        let measured = try parallelMap(names) { name -> [(label: String, distance: Float, bound: Float)] in
            let image = try ImageDecoder.decode(try Data(contentsOf: dir.appendingPathComponent(name)),
                                                options: DecodeOptions(firstFrameOnly: true, maxPixelSize: 400))
            let source = try Self.opaque(try image.orientation.upright(image.firstFrame.buffer))
            var distances: [(label: String, distance: Float, bound: Float)] = []
            for (target, bound) in Self.bounds {
                for format in [ImageFormat.jpeg, .webp] {
                    var encoder = ImageEncoder(format: format, options: EncodeOptions(automaticQuality: target))
                    encoder.addFrame(source)
                    let decoded = try ImageDecoder.decode(try encoder.encode()).firstFrame.buffer
                    distances.append(("\(format) \(target)", try Self.butteraugli(source, decoded), bound))
                }
            }
            return distances
        }
        var worst: [String: (Float, String)] = [:]
        for (name, distances) in zip(names, measured) {
            for (label, distance, bound) in distances {
                XCTAssertLessThanOrEqual(distance, bound, "\(name) \(label)")
                if distance > worst[label]?.0 ?? -1 { worst[label] = (distance, name) }
            }
        }
        for (label, (distance, name)) in worst.sorted(by: { $0.key < $1.key }) {
            print("Butteraugli 3-norm, worst of \(label): \(distance) (\(name))")
        }
    }

    /// Butteraugli's 3-norm distance of `distorted` from `reference` (opaque sRGB, same size).
    static func butteraugli(_ reference: PixelBuffer, _ distorted: PixelBuffer) throws -> Float {
        guard let api = JxlButteraugliApiCreate(nil) else { throw XCTSkip("libjxl has no Butteraugli") }
        defer { JxlButteraugliApiDestroy(api) }
        var format = JxlPixelFormat(num_channels: 3, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        let a = rgb(reference), b = rgb(distorted)
        let result = a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                JxlButteraugliCompute(api, UInt32(reference.width), UInt32(reference.height), &format, pa.baseAddress, pa.count,
                                      &format, pb.baseAddress, pb.count)
            }
        }
        guard let result else { throw XCTSkip("JxlButteraugliCompute failed") }
        defer { JxlButteraugliResultDestroy(result) }
        return JxlButteraugliResultGetDistance(result, 3)
    }

    static func rgb(_ buffer: PixelBuffer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(buffer.width * buffer.height * 3)
        for y in 0..<buffer.height {
            for x in 0..<buffer.width {
                let p = buffer.pixel(x: x, y: y)
                out += [p.r, p.g, p.b]
            }
        }
        return out
    }

    /// Composited on mid grey (both metrics then see the same opaque pixels).
    static func opaque(_ buffer: PixelBuffer) throws -> PixelBuffer { try OpaqueComposite.onMidGrey(buffer) }
}
