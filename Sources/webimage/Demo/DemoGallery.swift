import Dispatch
import Foundation
import ImageCodec
import WebImage

/// One picture of the demo gallery: how it is encoded and its bytes.
struct GalleryItem: Sendable {
    /// The encoding, as shown in labels and tables.
    enum Kind: String, Sendable, CaseIterable {
        case jpeg = "JPEG"
        case progressiveJPEG = "JPEG PROG"
        case png = "PNG"
        case interlacedPNG = "PNG ILACE"
        case gif = "GIF"
        case animatedGIF = "GIF ANIM"
        case apng = "APNG"
        case lossyWebP = "WEBP"
        case losslessWebP = "WEBP LL"
        case animatedWebP = "WEBP ANIM"

        var fileExtension: String {
            switch self {
            case .jpeg, .progressiveJPEG: return "jpg"
            case .png, .interlacedPNG, .apng: return "png"
            case .gif, .animatedGIF: return "gif"
            case .lossyWebP, .losslessWebP, .animatedWebP: return "webp"
            }
        }

        var contentType: String {
            switch self {
            case .jpeg, .progressiveJPEG: return "image/jpeg"
            case .png, .interlacedPNG: return "image/png"
            case .apng: return "image/apng"
            case .gif, .animatedGIF: return "image/gif"
            case .lossyWebP, .losslessWebP, .animatedWebP: return "image/webp"
            }
        }

        var isAnimated: Bool { self == .animatedGIF || self == .apng || self == .animatedWebP }
    }

    var kind: Kind
    var width: Int
    var height: Int
    var frameCount: Int
    var data: Data
    /// The server path, e.g. `/jpeg-prog/640x480-3.jpg`.
    var path: String
    /// What the contact sheet shows under the thumbnail, e.g. `JPEG PROG 640x480`.
    var label: String { "\(kind.rawValue) \(width)x\(height)" }
}

/// The built-in gallery: pictures painted at start and encoded with WebImage's own encoders.
///
/// - Important: Stateless; `make()` encodes on all cores and returns when every picture is ready.
enum DemoGallery {
    struct Spec: Sendable {
        var kind: GalleryItem.Kind
        var width: Int
        var height: Int
        var frames: Int = 1
    }

    /// The gallery's recipe: 44 pictures over every format and variant, from 96×96 to 1600×1200.
    static let specs: [Spec] = {
        let photo = [(1600, 1200), (1024, 768), (800, 600), (640, 480), (480, 320), (320, 240), (160, 120)]
        let graphic = [(800, 600), (512, 512), (320, 240), (256, 256), (128, 128), (96, 96)]
        var specs: [Spec] = []
        specs += photo.map { Spec(kind: .jpeg, width: $0.0, height: $0.1) }
        specs += photo.prefix(6).map { Spec(kind: .progressiveJPEG, width: $0.0, height: $0.1) }
        specs += graphic.map { Spec(kind: .png, width: $0.0, height: $0.1) }
        specs += graphic.prefix(4).map { Spec(kind: .interlacedPNG, width: $0.0, height: $0.1) }
        specs += [(320, 240), (128, 128)].map { Spec(kind: .gif, width: $0.0, height: $0.1) }
        specs += [(320, 240), (200, 200), (120, 90)].map { Spec(kind: .animatedGIF, width: $0.0, height: $0.1, frames: 12) }
        specs += [(320, 240), (200, 200), (120, 90)].map { Spec(kind: .apng, width: $0.0, height: $0.1, frames: 10) }
        specs += photo.prefix(6).map { Spec(kind: .lossyWebP, width: $0.0, height: $0.1) }
        specs += [(512, 384), (320, 240), (256, 256), (128, 128)].map { Spec(kind: .losslessWebP, width: $0.0, height: $0.1) }
        specs += [(400, 300), (240, 180), (160, 120)].map { Spec(kind: .animatedWebP, width: $0.0, height: $0.1, frames: 12) }
        return specs
    }()

    /// Paints and encodes every picture of `specs`, in parallel.
    ///
    /// - Throws: the first encoder error (`ImageCodecError`).
    static func make(specs: [Spec] = DemoGallery.specs) throws -> [GalleryItem] {
        let results = ResultSlots<GalleryItem>(count: specs.count)
        DispatchQueue.concurrentPerform(iterations: specs.count) { index in
            results.set(index, Result { try encode(specs[index], index: index) })
        }
        return try results.values()
    }

    private static func encode(_ spec: Spec, index: Int) throws -> GalleryItem {
        let seed = UInt64(index + 1) &* 0x2545_F491_4F6C_DD1D
        let hasAlpha = spec.kind == .png && index % 2 == 0 || spec.kind == .losslessWebP || spec.kind == .apng
        var options = EncodeOptions()
        let format: ImageFormat
        switch spec.kind {
        case .jpeg: format = .jpeg
        case .progressiveJPEG: format = .jpeg; options.isProgressive = true
        case .png: format = .png
        case .interlacedPNG: format = .png; options.isProgressive = true
        case .gif, .animatedGIF: format = .gif
        case .apng: format = .apng
        case .lossyWebP, .animatedWebP: format = .webp; options.quality = 0.8
        case .losslessWebP: format = .webp; options.isLossless = true
        }
        var encoder = ImageEncoder(format: format, loopCount: 0, options: options)
        // PNGs and GIFs are graphics: less grain, as drawings have; photos get the full grain.
        let grain = (format == .png || format == .apng || format == .gif || spec.kind == .losslessWebP) ? 3 : 14
        for frame in 0..<spec.frames {
            let buffer = try DemoPainter.paint(width: spec.width, height: spec.height, seed: seed,
                                               phase: Double(frame) / Double(spec.frames), alpha: hasAlpha, grain: grain)
            encoder.addFrame(buffer, duration: 0.08)
        }
        let data = try encoder.encode()
        let folder = spec.kind.rawValue.lowercased().replacingOccurrences(of: " ", with: "-")
        return GalleryItem(kind: spec.kind, width: spec.width, height: spec.height, frameCount: spec.frames, data: data,
                           path: "/\(folder)/\(spec.width)x\(spec.height)-\(index).\(spec.kind.fileExtension)")
    }
}

/// Fixed slots filled from concurrent workers.
///
/// - Important: Thread-safe (a `Mutex` guards the slots).
final class ResultSlots<Value: Sendable>: Sendable {
    private let slots: Mutex<[Result<Value, any Error>?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    func set(_ index: Int, _ result: Result<Value, any Error>) { slots.withLock { $0[index] = result } }

    /// Every value in order, or the first error.
    func values() throws -> [Value] {
        try slots.withLock { $0 }.map { slot in
            guard let slot else { throw CLIError.internalFailure("a worker left no result") }
            return try slot.get()
        }
    }
}
