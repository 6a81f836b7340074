import Foundation
import WebImage

/// Writes the demo's two pictures: the contact sheet (PNG) and one animation of the gallery (GIF).
///
/// - Important: Stateless; does file I/O on the calling thread.
enum DemoOutputs {
    static let contactSheetName = "webimage-demo.png"
    static let animationName = "webimage-demo.gif"

    /// Renders every image's first frame, labelled, and writes `webimage-demo.png` into `folder`.
    static func writeContactSheet(gallery: [GalleryItem], images: [Image?], to folder: URL) throws -> URL {
        let entries = zip(gallery, images).map { item, image in
            var detail = Terminal.bytes(Int64(item.data.count))
            if item.frameCount > 1 { detail += " \(item.frameCount) FRAMES" }
            return ContactSheet.Entry(title: item.label, detail: detail, frame: image?.firstFrame.buffer)
        }
        let loaded = images.compactMap { $0 }.count
        let sheet = try ContactSheet.render(entries, title: "WEBIMAGE DEMO - \(loaded)/\(gallery.count) IMAGES")
        var encoder = ImageEncoder(format: .png)
        encoder.addFrame(sheet)
        return try write(try encoder.encode(), named: contactSheetName, in: folder)
    }

    /// Re-encodes the largest animated WebP of the gallery as it was loaded (every frame, its timing, a
    /// caption strip) into `webimage-demo.gif`; `nil` when no animation loaded.
    static func writeAnimation(gallery: [GalleryItem], images: [Image?], to folder: URL) throws -> URL? {
        let candidates = zip(gallery, images).compactMap { item, image in image.map { (item, $0) } }
            .filter { $0.1.isAnimated }
            .sorted { ($0.0.kind == .animatedWebP ? 1 : 0, $0.1.width) > ($1.0.kind == .animatedWebP ? 1 : 0, $1.1.width) }
        guard let (item, image) = candidates.first else { return nil }
        let caption = "\(item.label) VIA WEBIMAGE"
        var encoder = ImageEncoder(format: .gif, loopCount: 0)
        for frame in try image.allFrames() {
            var canvas = Canvas(width: image.width, height: image.height + 14, color: (32, 34, 40))
            canvas.checkerboard(x: 0, y: 0, width: image.width, height: image.height)
            canvas.draw(frame.buffer, x: 0, y: 0)
            canvas.text(String(caption.prefix(image.width / BitmapFont.advance)), x: 3, y: image.height + 4,
                        color: (235, 235, 235))
            encoder.addFrame(try canvas.pixelBuffer(), duration: frame.duration)
        }
        return try write(try encoder.encode(), named: animationName, in: folder)
    }

    private static func write(_ data: Data, named name: String, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent(name)
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw CLIError.output(path: url.path, reason: "\(error)")
        }
        return url
    }
}
