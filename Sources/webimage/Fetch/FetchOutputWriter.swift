import Foundation
#if canImport(Glibc)
import Glibc
#endif
import WebImage

/// Writes fetched images into the `--out` folder: the original bytes, or re-encoded in `--format` (or in
/// the original format when a thumbnail was decoded), under a name taken from the URL.
///
/// An image is written as soon as it is loaded (`writePending`, under a temporary name) and given its name in
/// the order of the URLs (`place`), so names do not depend on the order images finish in and no image waits
/// in memory for its turn.
///
/// - Important: Not thread-safe (it remembers the names used); call `place` from one thread at a time
///   (`writePending` changes nothing and may run anywhere).
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

    /// Writes `image` now, under a hidden temporary name for the `index`-th URL, and returns that file and the
    /// extension its final name takes; `place` gives it its name later, in the order of the URLs (so names
    /// stay the same whatever order the images finish in, and no image waits in memory for its turn).
    ///
    /// - Throws: `ImageCodecError` from the encoder, `CLIError.output` when the file cannot be written.
    func writePending(_ image: Image, index: Int) throws -> (file: URL, fileExtension: String) {
        let (data, fileExtension) = try encode(image)
        let file = folder.appendingPathComponent(".webimage-fetch-\(getpid())-\(index).partial")
        do {
            try data.write(to: file, options: .atomic)
        } catch {
            throw CLIError.output(path: file.path, reason: "\(error)")
        }
        return (file, fileExtension)
    }

    /// Renames a file written by `writePending` to the unique name for `url` (replacing a file of that name, as
    /// `write` does) and returns it.
    ///
    /// - Throws: `CLIError.output` when it cannot be renamed (the temporary file is then removed).
    mutating func place(_ pending: URL, fileExtension: String, for url: URL) throws -> URL {
        let file = folder.appendingPathComponent(uniqueName(for: url, extension: fileExtension))
        guard rename(pending.path, file.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: pending) // best effort: already failing
            throw CLIError.output(path: file.path, reason: reason)
        }
        return file
    }

    /// The bytes to write for `image` and their file extension: the original bytes, or re-encoded.
    private func encode(_ image: Image) throws -> (Data, String) {
        let targetFormat = format ?? image.format
        let data: Data
        if format == nil, !isThumbnail, let original = image.originalData {
            data = original
        } else {
            data = try image.encoded(as: Self.encodable(targetFormat), quality: 0.9)
        }
        return (data, ImageFormat.sniff(data).fileExtension)
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
