import Foundation
import WebImage

/// Writes fetched images into the `--out` folder: the original bytes, or re-encoded in `--format` (or in
/// the original format when a thumbnail was decoded), under a name taken from the URL.
///
/// - Important: Not thread-safe (it remembers the names used); call it from one thread.
struct FetchOutputWriter {
    var folder: URL
    /// The format to re-encode in; `nil` keeps the original bytes where possible.
    var format: ImageFormat?
    /// Whether images were decoded as thumbnails (then the original bytes are not what was asked for).
    var isThumbnail: Bool
    private var usedNames: Set<String> = []

    init(folder: URL, format: ImageFormat?, isThumbnail: Bool) {
        self.folder = folder
        self.format = format
        self.isThumbnail = isThumbnail
    }

    /// Writes `image` loaded from `url` and returns the file's URL.
    ///
    /// - Throws: `ImageCodecError` from the encoder, `CLIError.output` when the file cannot be written.
    mutating func write(_ image: Image, from url: URL) throws -> URL {
        let targetFormat = format ?? image.format
        let data: Data
        if format == nil, !isThumbnail, let original = image.originalData {
            data = original
        } else {
            data = try image.encoded(as: Self.encodable(targetFormat), quality: 0.9)
        }
        let file = folder.appendingPathComponent(uniqueName(for: url, extension: ImageFormat.sniff(data).fileExtension))
        do {
            try data.write(to: file, options: .atomic)
        } catch {
            throw CLIError.output(path: file.path, reason: "\(error)")
        }
        return file
    }

    /// A format the encoders write: the format itself, or PNG for one that is only decoded.
    private static func encodable(_ format: ImageFormat) -> ImageFormat {
        switch format {
        case .jpeg, .png, .apng, .gif, .webp: return format
        default: return .png
        }
    }

    /// `photo.jpg` from `https://host/a/photo.jpeg?x=1`; `image-2.png` when the URL has no name; a number
    /// appended when a name repeats.
    private mutating func uniqueName(for url: URL, extension fileExtension: String) -> String {
        let stem = url.deletingPathExtension().lastPathComponent
        let safe = String(stem.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" })
        let base = safe.isEmpty || safe == "/" ? "image" : safe
        var name = "\(base).\(fileExtension)"
        var counter = 2
        while usedNames.contains(name) {
            name = "\(base)-\(counter).\(fileExtension)"
            counter += 1
        }
        usedNames.insert(name)
        return name
    }
}
